package reflector

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests in this file give the reflector nothing but answers: a script of
// list pages and watch streams. Every piece of state the relist policy
// depends on (the last synced version, "version unavailable", "the first
// list came back in pages", "this watch started at any version") must then
// be derived by the reflector itself, and the tests check the requests it
// makes next.

// drivenStep is one step of the state machine as driveScript saw it.
type drivenStep struct {
	phase  phase
	wait   time.Duration
	lastRV string // the last synced version after the step
}

// answers reports whether src has an answer for what st is about to do.
func (s *scriptSource) answers(st state) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch st.phase {
	case phaseList:
		return len(s.pages) > 0
	case phaseWatch, phaseWatchList:
		return len(s.watches) > 0
	case phaseStream:
		// The reader may have taken every step already; the state knows
		// how many the loop has handled.
		w, ok := watcherOf(st.feed).(interface{ scripted() int })
		return !ok || st.events < w.scripted()
	}
	return true
}

// driveScript runs the state machine from s as Run does, without waiting out the
// backoffs (it returns them), until the next step needs an answer the
// script does not have.
func driveScript(t *testing.T, r *Reflector, src *scriptSource, s state) []drivenStep {
	t.Helper()
	var out []drivenStep
	for range 100 {
		if !src.answers(s) {
			s.closeWatch()
			return out
		}
		next, wait := r.step(context.Background(), s)
		out = append(out, drivenStep{phase: next.phase, wait: wait, lastRV: next.lastRV})
		s = next
	}
	t.Fatalf("the script was not used up within 100 steps: %v", out)
	return nil
}

func listVersions(src *scriptSource) []string {
	src.mu.Lock()
	defer src.mu.Unlock()
	var out []string
	for _, o := range src.listOpts {
		if o.Continue == "" {
			out = append(out, o.ResourceVersion)
		}
	}
	return out
}

func listLimits(src *scriptSource) []int64 {
	src.mu.Lock()
	defer src.mu.Unlock()
	var out []int64
	for _, o := range src.listOpts {
		out = append(out, o.Limit)
	}
	return out
}

func watchVersions(src *scriptSource) []string {
	src.mu.Lock()
	defer src.mu.Unlock()
	var out []string
	for _, o := range src.watchOpts {
		out = append(out, o.ResourceVersion)
	}
	return out
}

// policyCase is a script of answers and the requests that must follow.
type policyCase struct {
	name     string
	prep     func(r *Reflector) // options, never state
	from     state              // the zero state is phaseStart with nothing learnt
	pages    []func(httpwatch.ListOptions) (*httpwatch.Page, error)
	watches  []func(httpwatch.ListOptions) (httpwatch.Watcher, error)
	lists    []string // resourceVersion of every list (not of continued pages)
	watchRVs []string // resourceVersion of every watch
	calls    []string // sink calls; nil is not checked
}

func (tc policyCase) run(t *testing.T) (*Reflector, *scriptSource, []drivenStep) {
	t.Helper()
	src := &scriptSource{pages: tc.pages, watches: tc.watches}
	r, sink, _ := newTestReflector(src)
	if tc.prep != nil {
		tc.prep(r)
	}
	steps := driveScript(t, r, src, tc.from)
	assert.Equal(t, tc.lists, listVersions(src), "resourceVersion of the lists")
	assert.Equal(t, tc.watchRVs, watchVersions(src), "resourceVersion of the watches")
	if tc.calls != nil {
		assert.Equal(t, tc.calls, sink.log(), "sink calls")
	}
	return r, src, steps
}

// conformance 13, decision 1: a watch that ends with 410 (as an ERROR event
// or as the answer to the watch request) relists at the last synced
// resourceVersion, served by the watch cache, never at "" (a quorum read
// from etcd for every client at once: kubernetes#83520).
func TestReflectorRelistAfterWatchGoneReadsLastSyncedRV(t *testing.T) {
	for _, tc := range []policyCase{
		{
			name:  "conformance 13: ERROR Expired after an event relists at the event's RV",
			pages: []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", "", obj("a", "10")), page("14", "", obj("a", "12"))},
			watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){
				watchOf(newWatcher(ev(httpwatch.Modified, obj("a", "12")), errEv(errExpired))),
				watchOf(newWatcher()),
			},
			lists: []string{"0", "12"}, watchRVs: []string{"10", "14"},
			calls: []string{"replace 1@10", "update a@12", "replace 1@14"},
		},
		{
			name:  "conformance 13: a bookmark's RV counts as synced",
			pages: []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", ""), page("20", "")},
			watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){
				watchOf(newWatcher(ev(httpwatch.Bookmark, obj("", "19")), errEv(errGone))),
				watchOf(newWatcher()),
			},
			lists: []string{"0", "19"}, watchRVs: []string{"10", "20"},
		},
		{
			name:  "conformance 13: ERROR Gone straight after the list relists at the list's RV",
			pages: []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", ""), page("11", "")},
			watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){
				watchOf(newWatcher(errEv(errGone))),
				watchOf(newWatcher()),
			},
			lists: []string{"0", "10"}, watchRVs: []string{"10", "11"},
		},
		{
			name:  "conformance 13 22: a watch request refused with 410 relists at the last synced RV",
			pages: []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", ""), page("11", "")},
			watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){
				watchOf(newWatcher(ev(httpwatch.Added, obj("b", "11")), end(io.EOF))),
				watchFail(errExpired),
				watchOf(newWatcher()),
			},
			lists: []string{"0", "11"}, watchRVs: []string{"10", "11", "11"},
		},
		{
			name:  "conformance 12 13: only a relist that itself fails with 410 reads \"\"",
			pages: []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", ""), fail(errExpired), page("30", ""), page("31", "")},
			watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){
				watchOf(newWatcher(errEv(errExpired))),
				watchOf(newWatcher(ev(httpwatch.Modified, obj("a", "30")), errEv(errExpired))),
				watchOf(newWatcher()),
			},
			lists: []string{"0", "10", "", "30"}, watchRVs: []string{"10", "30", "31"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t) })
	}
}

// conformance 12, decision 1: a list the server refuses because it has not
// reached the version asked for (504 with cause ResourceVersionTooLarge,
// kubernetes#107133), or because the version is compacted away, is retried
// at once at "" (a consistent read); the next successful list clears that,
// so later relists read the last synced version again. Other failures keep
// the version and back off.
func TestReflectorListFallsBackToQuorumRead(t *testing.T) {
	tooLarge := tooLargeFixture(t)
	timeout := &httpwatch.StatusError{Code: 504, Reason: "Timeout", Message: "Timeout: request did not complete within the allotted timeout"}
	for _, tc := range []struct {
		policyCase
		waits []time.Duration // before each list after the first
	}{
		{
			policyCase: policyCase{
				name:  "conformance 12: 504 ResourceVersionTooLarge lists again at \"\" at once",
				pages: []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("1000", ""), fail(tooLarge), page("212", ""), page("215", "")},
				watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){
					watchOf(newWatcher(errEv(errExpired))),
					watchOf(newWatcher(errEv(errExpired))),
					watchOf(newWatcher()),
				},
				lists: []string{"0", "1000", "", "212"}, watchRVs: []string{"1000", "212", "215"},
			},
			waits: []time.Duration{800 * time.Millisecond, 0, 1600 * time.Millisecond},
		},
		{
			policyCase: policyCase{
				name:  "conformance 12: 410 Expired lists again at \"\" at once",
				pages: []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", ""), fail(errExpired), page("30", "")},
				watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){
					watchOf(newWatcher(errEv(errExpired))),
					watchOf(newWatcher()),
				},
				lists: []string{"0", "10", ""}, watchRVs: []string{"10", "30"},
			},
			waits: []time.Duration{800 * time.Millisecond, 0},
		},
		{
			policyCase: policyCase{
				name:  "conformance 9 12: a 504 without that cause backs off and keeps the version",
				pages: []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", ""), fail(timeout), page("30", "")},
				watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){
					watchOf(newWatcher(errEv(errExpired))),
					watchOf(newWatcher()),
				},
				lists: []string{"0", "10", "10"}, watchRVs: []string{"10", "30"},
			},
			waits: []time.Duration{800 * time.Millisecond, 1600 * time.Millisecond},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, steps := tc.run(t)
			// A relist may pass through the start phase (which decides
			// between watch-list and list): sum the waits since the last list.
			var waits []time.Duration
			var since time.Duration
			for _, s := range steps[1:] { // the first list follows the start at once
				since += s.wait
				if s.phase == phaseList {
					waits = append(waits, since)
				}
				if s.phase == phaseList || s.phase == phaseStream {
					since = 0
				}
			}
			assert.Equal(t, tc.waits, waits, "wait before each relist")
		})
	}
}

// conformance 30: a watch-list the server refuses because of its version
// (410 before the initial-events-end bookmark, or a 504 "too large" to the
// request) is opened again at once at "", and what the broken stream had
// delivered is dropped; other failures fall back to a paged list.
func TestReflectorWatchListVersionFallback(t *testing.T) {
	watchList := func(r *Reflector) { r.PagedList = false }
	from := at(phaseWatchList, synced("10"))
	for _, tc := range []policyCase{
		{
			name: "conformance 30: 410 inside the stream before the bookmark retries at \"\"",
			prep: watchList, from: from,
			watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){
				watchOf(newWatcher(ev(httpwatch.Added, obj("stale", "9")), errEv(errExpired))),
				watchOf(newWatcher(ev(httpwatch.Added, obj("a", "15")), ev(httpwatch.Bookmark, endBookmark("20")))),
			},
			watchRVs: []string{"10", ""}, calls: []string{"replace 1@20"},
		},
		{
			name: "conformance 30: a 504 too-large answer to the watch-list retries at \"\"",
			prep: watchList, from: from,
			watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){
				watchFail(tooLargeFixture(t)),
				watchOf(newWatcher(ev(httpwatch.Bookmark, endBookmark("20")))),
			},
			watchRVs: []string{"10", ""}, calls: []string{"replace 0@20"},
		},
		{
			name: "conformance 30: other stream errors before the bookmark fall back to a list",
			prep: watchList, from: from,
			watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){
				watchOf(newWatcher(ev(httpwatch.Added, obj("a", "15")), errEv(errInternal))),
				watchOf(newWatcher()),
			},
			pages: []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("21", "", obj("a", "21"))},
			lists: []string{"10"}, watchRVs: []string{"10", "21"}, calls: []string{"replace 1@21"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, src, steps := tc.run(t)
			for _, s := range steps {
				if s.phase == phaseWatchList {
					assert.Zero(t, s.wait, "a version problem is retried without a backoff")
				}
			}
			src.mu.Lock()
			defer src.mu.Unlock()
			assert.True(t, src.watchOpts[0].SendInitialEvents, "the first request is a watch-list")
			if len(tc.lists) == 0 {
				assert.True(t, src.watchOpts[1].SendInitialEvents, "so is the retry")
			}
		})
	}
}

// agedWatcher is a scriptWatcher that was open for lasts (on the fake clock)
// before its first step.
type agedWatcher struct {
	*scriptWatcher
	clock *clock.Fake
	lasts time.Duration
}

func (w *agedWatcher) Next() (httpwatch.Event, error) {
	w.clock.Step(w.lasts)
	w.lasts = 0
	return w.scriptWatcher.Next()
}

// conformance 20, conformance 21: a watch that ends within a second without
// an event is a very short watch: reported, then a relist after a backoff.
// One that lasted a second or more, or that delivered an event, ended
// normally (a server-side timeout of a quiet resource) and is reopened at
// once from the last version, without a relist.
func TestReflectorVeryShortWatch(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lasted   time.Duration
		steps    []watchStep
		lists    []string
		watchRVs []string
		wait     time.Duration // before the step after the watch
		short    bool
	}{
		{"conformance 21: closed at once without events", 0, nil, []string{"0", "10"}, []string{"10"}, 800 * time.Millisecond, true},
		{"conformance 21: closed after 999ms without events", 999 * time.Millisecond, nil, []string{"0", "10"}, []string{"10"}, 800 * time.Millisecond, true},
		{"conformance 20 21: quiet for exactly 1s", time.Second, nil, []string{"0"}, []string{"10", "10"}, 0, false},
		{"conformance 20 21: quiet for 5 minutes", 5 * time.Minute, nil, []string{"0"}, []string{"10", "10"}, 0, false},
		{"conformance 20 21: closed at once after one bookmark", 0, []watchStep{ev(httpwatch.Bookmark, obj("", "11"))}, []string{"0"}, []string{"10", "11"}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &scriptSource{}
			r, _, c := newTestReflector(src)
			var errs []error
			r.OnError = func(err error) { errs = append(errs, err) }
			steps := append(append([]watchStep(nil), tc.steps...), end(io.EOF))
			w := &agedWatcher{scriptWatcher: newWatcher(steps...), clock: c, lasts: tc.lasted}
			src.pages = []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", ""), page("12", "")}
			src.watches = []func(httpwatch.ListOptions) (httpwatch.Watcher, error){
				func(httpwatch.ListOptions) (httpwatch.Watcher, error) { return w, nil },
				watchOf(newWatcher()),
			}
			got := driveScript(t, r, src, state{})
			assert.Equal(t, tc.lists, listVersions(src)[:len(tc.lists)], "lists")
			assert.Equal(t, tc.watchRVs, watchVersions(src)[:len(tc.watchRVs)], "watches")
			// start, list, watch, then one stream step per scripted step.
			after := got[3+len(tc.steps)]
			assert.Equal(t, tc.wait, after.wait, "wait after the watch ended")
			if tc.short {
				assert.Equal(t, phaseStart, after.phase, "a new cycle: relist")
				require.Len(t, errs, 1)
				assert.ErrorIs(t, errs[0], ErrVeryShortWatch)
				var se *SyncError
				require.ErrorAs(t, errs[0], &se)
				assert.Equal(t, OpWatch, se.Op)
			} else {
				assert.Equal(t, phaseWatch, after.phase)
				assert.Empty(t, errs)
			}
		})
	}
}

// decision 38, conformance 21: a watch that cannot start because the TLS
// handshake timed out, and one the network resets at once, are reported as
// what they are, never as a very short watch, and resumed from the same
// version after a backoff: no second list.
func TestReflectorNamesNetworkFailuresTruthfully(t *testing.T) {
	for _, tc := range []struct {
		name  string
		watch func(httpwatch.ListOptions) (httpwatch.Watcher, error)
		op    Op
		says  string
	}{
		{"TLS handshake timeout", watchFail(errTLSHandshake), OpWatchStart, "TLS handshake timeout"},
		{"reset at once", watchOf(newWatcher(end(fmt.Errorf("read: %w", errReset)))), OpWatch, "connection reset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &scriptSource{}
			r, _, _ := newTestReflector(src)
			var errs []error
			r.OnError = func(err error) { errs = append(errs, err) }
			src.pages = []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", "")}
			src.watches = []func(httpwatch.ListOptions) (httpwatch.Watcher, error){tc.watch, watchOf(newWatcher())}
			got := driveScript(t, r, src, state{})
			assert.Equal(t, []string{"0"}, listVersions(src), "one list, the first")
			assert.Equal(t, []string{"10", "10"}, watchVersions(src)[:2], "the watch resumed from the same version")
			require.Len(t, errs, 1)
			assert.NotErrorIs(t, errs[0], ErrVeryShortWatch)
			assert.ErrorContains(t, errs[0], tc.says)
			var se *SyncError
			require.ErrorAs(t, errs[0], &se)
			assert.Equal(t, tc.op, se.Op)
			assert.False(t, se.Routine, "said at Warn: the network failed")
			lists := 0
			for _, s := range got {
				if s.phase == phaseList {
					lists++
				}
			}
			assert.Equal(t, 1, lists, "no relist after the first list")
		})
	}
}

// conformance 15: the page size of a list is chosen from what earlier lists
// answered. Once the first list (at resourceVersion "0") came back in pages,
// the watch cache is evidently off and relists keep pages of 500; otherwise
// a relist at a specific version asks for no limit, so that the watch cache
// can serve it. A list at "" that came back in pages (etcd always pages)
// proves nothing.
func TestReflectorPageSizeFollowsFirstList(t *testing.T) {
	gone := func() func(httpwatch.ListOptions) (httpwatch.Watcher, error) {
		return watchOf(newWatcher(errEv(errExpired)))
	}
	for _, tc := range []struct {
		policyCase
		limits []int64 // of every list request, continued pages included
	}{
		{
			policyCase: policyCase{
				name:    "conformance 15: RV 0 list answered in pages keeps pages for relists",
				pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", "tok", obj("a", "3")), page("10", "", obj("b", "4")), page("12", "", obj("a", "3"), obj("b", "4"))},
				watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){gone(), watchOf(newWatcher())},
				lists:   []string{"0", "10"}, watchRVs: []string{"10", "12"},
				calls: []string{"replace 2@10", "replace 2@12"},
			},
			limits: []int64{500, 500, 500},
		},
		{
			policyCase: policyCase{
				name:    "conformance 15: RV 0 list in one page: relists at a version are unpaginated",
				pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", "", obj("a", "3")), page("12", "", obj("a", "3"))},
				watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){gone(), watchOf(newWatcher())},
				lists:   []string{"0", "10"}, watchRVs: []string{"10", "12"},
			},
			limits: []int64{500, 0},
		},
		{
			policyCase: policyCase{
				name: "conformance 15: a list at \"\" answered in pages does not switch paging on",
				pages: []func(httpwatch.ListOptions) (*httpwatch.Page, error){
					page("10", ""), fail(errExpired), page("20", "tok", obj("a", "3")), page("20", "", obj("b", "4")), page("25", ""),
				},
				watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){gone(), gone(), watchOf(newWatcher())},
				lists:   []string{"0", "10", "", "20"}, watchRVs: []string{"10", "20", "25"},
			},
			limits: []int64{500, 0, 500, 500, 0},
		},
		{
			policyCase: policyCase{
				name:    "conformance 15: an explicit page size is used for every list",
				prep:    func(r *Reflector) { r.PageSize = 7 },
				pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", ""), page("12", "")},
				watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){gone(), watchOf(newWatcher())},
				lists:   []string{"0", "10"}, watchRVs: []string{"10", "12"},
			},
			limits: []int64{7, 7},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, src, _ := tc.run(t)
			assert.Equal(t, tc.limits, listLimits(src), "limit of every list request")
		})
	}
}

// conformance 19: a watch started at "" or "0" begins with synthetic ADDED
// events for the current objects, in no resourceVersion order, so they do
// not move the last synced version; the first event of another type does,
// and from then on every event does.
func TestReflectorWatchFromAnyVersion(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prep    func(r *Reflector)
		from    state
		pages   []func(httpwatch.ListOptions) (*httpwatch.Page, error)
		start   string // resourceVersion of the first watch
		steps   []watchStep
		lastRVs []string // after each event
		rewatch string   // resourceVersion of the next watch
	}{
		{
			name:    "conformance 19: after a list without a resourceVersion the watch starts at \"\"",
			pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("", "")},
			start:   "",
			steps:   []watchStep{ev(httpwatch.Added, obj("a", "50")), ev(httpwatch.Added, obj("b", "40")), ev(httpwatch.Modified, obj("a", "51")), ev(httpwatch.Added, obj("c", "52")), end(io.EOF)},
			lastRVs: []string{"", "", "51", "52"},
			rewatch: "52",
		},
		{
			name:    "conformance 19: a bookmark ends the synthetic events too",
			pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("", "")},
			start:   "",
			steps:   []watchStep{ev(httpwatch.Added, obj("a", "50")), ev(httpwatch.Bookmark, obj("", "45")), end(io.EOF)},
			lastRVs: []string{"", "45"},
			rewatch: "45",
		},
		{
			name:    "conformance 19: a watch resumed at \"0\"",
			from:    at(phaseWatch, synced("0")),
			start:   "0",
			steps:   []watchStep{ev(httpwatch.Added, obj("a", "50")), ev(httpwatch.Deleted, obj("a", "51")), end(io.EOF)},
			lastRVs: []string{"0", "51"},
			rewatch: "51",
		},
		{
			name:    "conformance 17 19: a watch at a version moves it with ADDED events",
			pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", "")},
			start:   "10",
			steps:   []watchStep{ev(httpwatch.Added, obj("a", "50")), ev(httpwatch.Added, obj("b", "60")), end(io.EOF)},
			lastRVs: []string{"50", "60"},
			rewatch: "60",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &scriptSource{pages: tc.pages, watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){
				watchOf(newWatcher(tc.steps...)), watchOf(newWatcher()),
			}}
			r, _, _ := newTestReflector(src)
			if tc.prep != nil {
				tc.prep(r)
			}
			steps := driveScript(t, r, src, tc.from)
			var rvs []string
			for _, s := range steps {
				if s.phase == phaseStream {
					rvs = append(rvs, s.lastRV)
				}
			}
			// The first stream state is the opened watch, the last is the
			// reopened one; the ones between follow the events.
			require.Len(t, rvs, len(tc.lastRVs)+2)
			assert.Equal(t, tc.lastRVs, rvs[1:len(rvs)-1], "last synced RV after each event")
			assert.Equal(t, []string{tc.start, tc.rewatch}, watchVersions(src))
		})
	}
}

// randomSequence returns the values one after another, then the last forever.
func randomSequence(vs ...float64) func() float64 {
	return func() float64 {
		v := vs[0]
		if len(vs) > 1 {
			vs = vs[1:]
		}
		return v
	}
}

// conformance 10: every watch asks the server to end it after a random
// timeout in [MinWatchTimeout, 2·MinWatchTimeout), the minimum being 5
// minutes, drawn afresh for each watch (so that clients spread out).
func TestReflectorWatchTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		min    time.Duration
		random []float64
		want   []int64 // timeoutSeconds of the watch-list and the two watches
	}{
		{"conformance 10: default 5 minutes", 0, []float64{0, 0.5, 0.999}, []int64{300, 450, 599}},
		{"conformance 10: a shorter minimum is raised to 5 minutes", time.Minute, []float64{0.2, 0.4, 0.6}, []int64{360, 420, 480}},
		{"conformance 10: a longer minimum doubles for the maximum", 10 * time.Minute, []float64{0, 0.25, 0.999}, []int64{600, 750, 1199}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &scriptSource{watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){
				watchOf(newWatcher(ev(httpwatch.Bookmark, endBookmark("10")), end(io.EOF))),
				watchOf(newWatcher(ev(httpwatch.Added, obj("a", "11")), end(io.EOF))),
				watchOf(newWatcher()),
			}}
			r, _, _ := newTestReflector(src)
			r.PagedList = false
			if tc.min > 0 {
				r.MinWatchTimeout = tc.min
			}
			r.Random = randomSequence(tc.random...)
			driveScript(t, r, src, state{})
			src.mu.Lock()
			defer src.mu.Unlock()
			var got []int64
			for _, o := range src.watchOpts {
				got = append(got, o.TimeoutSeconds)
				assert.True(t, o.AllowWatchBookmarks)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
