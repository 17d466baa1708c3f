package reflector

import (
	"context"
	"testing"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/stretchr/testify/assert"
)

// Conformance 27 and 30: every list-and-watch cycle decides afresh how to sync,
// as upstream's ListAndWatch does. With WatchList on and a source that
// supports it, each cycle opens a watch-list; a refused watch-list falls
// back to a paged list for that cycle only, and the next cycle (after a
// 410, a failed list, ...) tries the watch-list again.
func TestReflectorEveryCycleTriesWatchListAgain(t *testing.T) {
	type watchAnswer = func(httpwatch.ListOptions) (httpwatch.Watcher, error)
	type listAnswer = func(httpwatch.ListOptions) (*httpwatch.Page, error)
	a := obj("a", "3")
	for _, tc := range []struct {
		name    string
		noWL    bool
		resume  string // a saved resourceVersion
		watches []watchAnswer
		pages   []listAnswer
		phases  []phase // after each step, starting from phaseStart
		sendIE  []bool  // SendInitialEvents of each watch request
		lists   int
	}{
		{
			name: "a 410 after a watch-list relists with a watch-list",
			watches: []watchAnswer{
				watchOf(newWatcher(ev(httpwatch.Added, a), ev(httpwatch.Bookmark, endBookmark("9")), errEv(errExpired))),
				watchOf(newWatcher(ev(httpwatch.Bookmark, endBookmark("12")))),
			},
			phases: []phase{
				phaseWatchList, phaseStream, phaseStream, phaseStream, phaseStart, // 410
				phaseWatchList, phaseStream, phaseStream,
			},
			sendIE: []bool{true, true},
		},
		{
			name: "a refused watch-list falls back to a list for that cycle only",
			watches: []watchAnswer{
				watchFail(errBad),
				watchOf(newWatcher(errEv(errExpired))),
				watchOf(newWatcher(ev(httpwatch.Bookmark, endBookmark("12")))),
			},
			pages: []listAnswer{page("10", "", a)},
			phases: []phase{
				phaseWatchList, phaseList, phaseWatch, phaseStream, phaseStart, // 410
				phaseWatchList, phaseStream, phaseStream,
			},
			sendIE: []bool{true, false, true},
			lists:  1,
		},
		{
			name:    "a failed fallback list begins a cycle that tries the watch-list again",
			watches: []watchAnswer{watchFail(errBad), watchOf(newWatcher(ev(httpwatch.Bookmark, endBookmark("12"))))},
			pages:   []listAnswer{fail(errInternal)},
			phases:  []phase{phaseWatchList, phaseList, phaseStart, phaseWatchList, phaseStream, phaseStream},
			sendIE:  []bool{true, true},
			lists:   1,
		},
		{
			name:    "a resumed watch that 410s resumes no more: the new cycle syncs",
			resume:  "77",
			watches: []watchAnswer{watchOf(newWatcher(errEv(errExpired))), watchOf(newWatcher(ev(httpwatch.Bookmark, endBookmark("80"))))},
			phases:  []phase{phaseWatch, phaseStream, phaseStart, phaseWatchList, phaseStream, phaseStream},
			sendIE:  []bool{false, true},
		},
		{
			name:    "conformance 31: a source without watch-list support is listed every cycle",
			noWL:    true,
			watches: []watchAnswer{watchOf(newWatcher(errEv(errExpired)))},
			pages:   []listAnswer{page("10", "", a), page("11", "", a)},
			phases:  []phase{phaseList, phaseWatch, phaseStream, phaseStart, phaseList, phaseWatch},
			sendIE:  []bool{false},
			lists:   2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &scriptSource{watches: tc.watches, pages: tc.pages, noWL: tc.noWL}
			r, _, _ := newTestReflector(src)
			r.PagedList = false
			s := at(phaseStart, synced(tc.resume))
			var got []phase
			for range tc.phases {
				s, _ = r.step(context.Background(), s)
				got = append(got, s.phase)
			}
			s.closeWatch()
			assert.Equal(t, tc.phases, got)
			var sendIE []bool
			for _, o := range src.watchOpts {
				sendIE = append(sendIE, o.SendInitialEvents)
			}
			assert.Equal(t, tc.sendIE, sendIE, "SendInitialEvents of each watch")
			assert.Len(t, src.listOpts, tc.lists, "list requests")
		})
	}
}
