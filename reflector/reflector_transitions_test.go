package reflector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
	"github.com/stretchr/testify/assert"
)

// t0 is the fake time of newTestReflector's clock.
var t0 = time.Unix(1000, 0)

// synced is the memory of a reflector synced to rv.
func synced(rv string) memory { return memory{lastRV: rv} }

// backedOff is m after one step of the default backoff at t0.
func backedOff(m memory) memory {
	m.backoff = progress{next: 1600 * time.Millisecond, resetAt: t0}
	return m
}

// netBackedOff is backedOff for a failure the server did not answer.
func netBackedOff(m memory) memory {
	m = backedOff(m)
	m.backoff.network = true
	return m
}

// climbed is a reflector synced to rv whose backoff climbed to 25.6 s
// within the last minute, by failures of the network or not.
func climbed(rv string, network bool) memory {
	m := synced(rv)
	m.backoff = progress{next: 25600 * time.Millisecond, resetAt: t0.Add(-time.Minute), network: network}
	return m
}

// at is a state in phase p remembering m.
func at(p phase, m memory) state { return state{phase: p, memory: m} }

// Each case is one transition of the state machine: a state, what the source
// answers, and the state (phase and everything it remembers), wait and sink
// calls that must follow. The relist policy is client-go's (decision 1), and
// a reflector can start from a saved resourceVersion (decision 10).
func TestReflectorTransitions(t *testing.T) {
	a1, b2 := obj("a", "1"), obj("b", "2")
	resyncEvery := func(r *Reflector, _ *scriptSource) { r.ResyncPeriod = time.Minute }
	// restoring gives r a restored state, loaded (ok) or not, or still loading.
	restoring := func(loaded, ok bool) func(r *Reflector, _ *scriptSource) {
		return func(r *Reflector, _ *scriptSource) {
			done := make(chan struct{})
			if loaded {
				close(done)
			}
			r.Restore = &Restore{Done: done, Loaded: func() bool { return ok }, ConfirmAfter: 100 * time.Millisecond,
				Confirmed: func() { _ = r.Sink.(*recordSink).add("confirmed") }}
		}
	}
	unconfirmed := memory{lastRV: "77", cycled: true, unconfirmed: true}
	loading := memory{lastRV: "77", cycled: true, unconfirmed: true, restoring: true}
	cases := []struct {
		name     string
		prep     func(r *Reflector, src *scriptSource) // configuration and answers, never state
		from     state
		want     phase
		mem      memory // what the next state remembers
		wait     time.Duration
		calls    []string
		checkOpt func(t *testing.T, src *scriptSource)
		check    func(t *testing.T, next state)
	}{
		{
			name: "start lists when watch-list is off",
			from: at(phaseStart, memory{}), want: phaseList, mem: memory{cycled: true},
		},
		{
			name: "conformance 27: start uses watch-list when on",
			prep: func(r *Reflector, _ *scriptSource) { r.PagedList = false },
			from: at(phaseStart, memory{}), want: phaseWatchList, mem: memory{cycled: true},
		},
		{
			name: "conformance 31: a source without watch-list support is listed",
			prep: func(r *Reflector, src *scriptSource) { r.PagedList = false; src.noWL = true },
			from: at(phaseStart, memory{}), want: phaseList, mem: memory{cycled: true},
		},
		{
			name: "decision 10: resume from a saved resourceVersion watches without listing",
			from: at(phaseStart, synced("77")), want: phaseWatch, mem: memory{lastRV: "77", cycled: true},
		},
		{
			name: "decision 10: later cycles list, whatever the last RV",
			from: at(phaseStart, memory{lastRV: "77", cycled: true}), want: phaseList, mem: memory{lastRV: "77", cycled: true},
		},
		{
			name: "conformance 23: a new cycle opens a fresh InternalError window",
			from: at(phaseStart, memory{lastRV: "5", cycled: true, internal: window{first: t0, last: t0}}),
			want: phaseList, mem: memory{lastRV: "5", cycled: true},
		},
		{
			name: "conformance 12, conformance 16: first list reads RV 0 in pages of 500, then Replace",
			prep: func(_ *Reflector, src *scriptSource) { src.pages = append(src.pages, page("10", "", a1, b2)) },
			from: at(phaseList, memory{}), want: phaseWatch, calls: []string{"replace 2@10"}, mem: synced("10"),
			checkOpt: func(t *testing.T, src *scriptSource) {
				assert.Equal(t, "0", src.listOpts[0].ResourceVersion)
				assert.EqualValues(t, 500, src.listOpts[0].Limit)
			},
		},
		{
			name: "conformance 14 15: list follows continue tokens to the end; an RV 0 list in pages is remembered",
			prep: func(_ *Reflector, src *scriptSource) {
				src.pages = append(src.pages, page("10", "tok", a1), page("10", "", b2))
			},
			from: at(phaseList, memory{}), want: phaseWatch, calls: []string{"replace 2@10"},
			mem: memory{lastRV: "10", paginated: true},
			checkOpt: func(t *testing.T, src *scriptSource) {
				assert.Equal(t, "tok", src.listOpts[1].Continue)
				assert.Empty(t, src.listOpts[1].ResourceVersion)
			},
		},
		{
			name: "conformance 13 15: a relist reads the last synced RV, unpaginated",
			prep: func(_ *Reflector, src *scriptSource) { src.pages = append(src.pages, page("45", "", a1)) },
			from: at(phaseList, synced("40")), want: phaseWatch, calls: []string{"replace 1@45"}, mem: synced("45"),
			checkOpt: func(t *testing.T, src *scriptSource) {
				assert.Equal(t, "40", src.listOpts[0].ResourceVersion)
				assert.EqualValues(t, 0, src.listOpts[0].Limit)
			},
		},
		{
			name: "conformance 15: once the RV 0 list came paginated, relists keep pages",
			prep: func(_ *Reflector, src *scriptSource) { src.pages = append(src.pages, page("45", "", a1)) },
			from: at(phaseList, memory{lastRV: "40", paginated: true}), want: phaseWatch, calls: []string{"replace 1@45"},
			mem:      memory{lastRV: "45", paginated: true},
			checkOpt: func(t *testing.T, src *scriptSource) { assert.EqualValues(t, 500, src.listOpts[0].Limit) },
		},
		{
			name: "conformance 15: an explicit page size wins",
			prep: func(r *Reflector, src *scriptSource) {
				r.PageSize = 7
				src.pages = append(src.pages, page("45", "", a1))
			},
			from: at(phaseList, synced("40")), want: phaseWatch, calls: []string{"replace 1@45"}, mem: synced("45"),
			checkOpt: func(t *testing.T, src *scriptSource) { assert.EqualValues(t, 7, src.listOpts[0].Limit) },
		},
		{
			name: "conformance 12: a list refused with Expired is retried at once at RV \"\"",
			prep: func(_ *Reflector, src *scriptSource) { src.pages = append(src.pages, fail(errExpired)) },
			from: at(phaseList, synced("40")), want: phaseList, mem: memory{lastRV: "40", rvUnavailable: true},
		},
		{
			name: "conformance 12: a list at RV \"\" that succeeds makes the version available again",
			prep: func(_ *Reflector, src *scriptSource) { src.pages = append(src.pages, page("60", "", a1)) },
			from: at(phaseList, memory{lastRV: "40", rvUnavailable: true}), want: phaseWatch,
			calls: []string{"replace 1@60"}, mem: synced("60"),
			checkOpt: func(t *testing.T, src *scriptSource) { assert.Empty(t, src.listOpts[0].ResourceVersion) },
		},
		{
			name: "conformance 9: any other list error backs off and begins a new cycle",
			prep: func(_ *Reflector, src *scriptSource) { src.pages = append(src.pages, fail(errInternal)) },
			from: at(phaseList, memory{}), want: phaseStart, wait: 800 * time.Millisecond, mem: backedOff(memory{}),
		},
		{
			name: "conformance 10 11: a watch asks for bookmarks at the last RV with a 5-10 min timeout",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchOf(newWatcher())) },
			from: at(phaseWatch, synced("10")), want: phaseStream, mem: synced("10"),
			checkOpt: func(t *testing.T, src *scriptSource) {
				o := src.watchOpts[0]
				assert.True(t, o.AllowWatchBookmarks)
				assert.Equal(t, "10", o.ResourceVersion)
				assert.EqualValues(t, 300, o.TimeoutSeconds)
				assert.False(t, o.SendInitialEvents)
			},
		},
		{
			name: "decision 36: each watch carries WatchIdleTimeout (by default 2m30s), for its source to bound its silence by",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchOf(newWatcher())) },
			from: at(phaseWatch, synced("10")), want: phaseStream, mem: synced("10"),
			checkOpt: func(t *testing.T, src *scriptSource) {
				assert.Equal(t, DefaultWatchIdleTimeout, src.watchOpts[0].IdleTimeout)
			},
		},
		{
			name: "decision 36: a negative WatchIdleTimeout asks for no bound at all",
			prep: func(r *Reflector, src *scriptSource) {
				r.WatchIdleTimeout = -1
				src.watches = append(src.watches, watchOf(newWatcher()))
			},
			from: at(phaseWatch, synced("10")), want: phaseStream, mem: synced("10"),
			checkOpt: func(t *testing.T, src *scriptSource) { assert.Negative(t, src.watchOpts[0].IdleTimeout) },
		},
		{
			name: "conformance 22: a refused watch start backs off and watches again",
			prep: func(_ *Reflector, src *scriptSource) {
				src.watches = append(src.watches, watchFail(fmt.Errorf("dial: %w", errConnRefused)))
			},
			from: at(phaseWatch, synced("10")), want: phaseWatch, wait: 800 * time.Millisecond, mem: netBackedOff(synced("10")),
		},
		{
			name: "conformance 22: a 429 watch start waits Retry-After, takes no backoff step and watches again",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errThrottle)) },
			from: at(phaseWatch, synced("10")), want: phaseWatch, wait: 7 * time.Second, mem: synced("10"),
		},
		{
			name: "conformance 22: other watch start errors relist after a backoff",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errGone)) },
			from: at(phaseWatch, synced("10")), want: phaseStart, wait: 800 * time.Millisecond, mem: backedOff(synced("10")),
		},
		{
			name: "conformance 22: a watch start the server fails (503) relists after a backoff",
			prep: func(_ *Reflector, src *scriptSource) {
				src.watches = append(src.watches, watchFail(&httpwatch.StatusError{Code: 503, Reason: "ServiceUnavailable"}))
			},
			from: at(phaseWatch, synced("10")), want: phaseStart, wait: 800 * time.Millisecond, mem: backedOff(synced("10")),
		},
		{
			name: "decision 38: a restored state whose watch cannot reach the server stays unconfirmed and resumes, unlisted",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errTLSHandshake)) },
			from: at(phaseWatch, unconfirmed), want: phaseWatch, wait: 800 * time.Millisecond, mem: netBackedOff(unconfirmed),
		},
		{
			name: "decision 38: a watch start failed by a dial timeout resumes from the same RV after a backoff",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errDialTimeout)) },
			from: at(phaseWatch, synced("10")), want: phaseWatch, wait: 800 * time.Millisecond, mem: netBackedOff(synced("10")),
		},
		{
			name: "decision 38: a watch start failed by a TLS handshake timeout resumes from the same RV after a backoff",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errTLSHandshake)) },
			from: at(phaseWatch, synced("10")), want: phaseWatch, wait: 800 * time.Millisecond, mem: netBackedOff(synced("10")),
		},
		{
			name: "decision 38: a watch start failed by a reset resumes from the same RV after a backoff",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errReset)) },
			from: at(phaseWatch, synced("10")), want: phaseWatch, wait: 800 * time.Millisecond, mem: netBackedOff(synced("10")),
		},
		{
			name: "decision 38: a watch start failed by an EOF before the response resumes from the same RV after a backoff",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errNoResponse)) },
			from: at(phaseWatch, synced("10")), want: phaseWatch, wait: 800 * time.Millisecond, mem: netBackedOff(synced("10")),
		},
		{
			name: "decision 38: a watch start failed by a connection found dead (ErrConnectionLost) resumes from the same RV after a backoff",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errLost)) },
			from: at(phaseWatch, synced("10")), want: phaseWatch, wait: 800 * time.Millisecond, mem: netBackedOff(synced("10")),
		},
		{
			name: "decision 38: a watch start failed by a name that does not resolve resumes from the same RV after a backoff",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errDNS)) },
			from: at(phaseWatch, synced("10")), want: phaseWatch, wait: 800 * time.Millisecond, mem: netBackedOff(synced("10")),
		},
		{
			name: "decision 38: a watch start failed by an unreachable network resumes from the same RV after a backoff",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errUnreachable)) },
			from: at(phaseWatch, synced("10")), want: phaseWatch, wait: 800 * time.Millisecond, mem: netBackedOff(synced("10")),
		},
		{
			name: "decision 38: a watch start failed by no response headers in time resumes from the same RV after a backoff",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errHeaderTimeout)) },
			from: at(phaseWatch, synced("10")), want: phaseWatch, wait: 800 * time.Millisecond, mem: netBackedOff(synced("10")),
		},
		{
			name: "decision 38: a watch-list that cannot reach the server tries the watch-list again after a backoff, no paged list",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errTLSHandshake)) },
			from: at(phaseWatchList, synced("10")), want: phaseWatchList, wait: 800 * time.Millisecond, mem: netBackedOff(synced("10")),
		},
		{
			name: "decision 38: a watch the network cut within a second, before any event, resumes after a backoff: no relist",
			from: streamOf(newWatcher(end(fmt.Errorf("read: %w", errReset))), synced("5")), want: phaseWatch,
			wait: 800 * time.Millisecond, mem: netBackedOff(synced("5")),
		},
		{
			name: "decision 38: so does one found dead at once",
			from: streamOf(newWatcher(end(errLost)), synced("5")), want: phaseWatch,
			wait: 800 * time.Millisecond, mem: netBackedOff(synced("5")),
		},
		{
			name: "conformance 8, decision 38: the server's 410 after steps the network climbed relists after a first step, not the outage's last",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errGone)) },
			from: at(phaseWatch, climbed("10", true)), want: phaseStart, wait: 800 * time.Millisecond, mem: backedOff(synced("10")),
		},
		{
			name: "conformance 8, decision 38: so does an ERROR 410 on the first watch through",
			from: streamOf(newWatcher(errEv(errExpired)), climbed("5", true)), want: phaseStart, wait: 800 * time.Millisecond,
			mem: backedOff(synced("5")),
		},
		{
			name: "conformance 8: steps the server's own answers climbed stay: a 503 after them waits the next",
			prep: func(_ *Reflector, src *scriptSource) {
				src.watches = append(src.watches, watchFail(&httpwatch.StatusError{Code: 503, Reason: "ServiceUnavailable"}))
			},
			from: at(phaseWatch, climbed("10", false)), want: phaseStart, wait: 25600 * time.Millisecond,
			mem: memory{lastRV: "10", backoff: progress{next: 30 * time.Second, resetAt: t0.Add(-time.Minute)}},
		},
		{
			name: "conformance 8: the network's failures climb on from the steps they climbed",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errTLSHandshake)) },
			from: at(phaseWatch, climbed("10", true)), want: phaseWatch, wait: 25600 * time.Millisecond,
			mem: memory{lastRV: "10", backoff: progress{next: 30 * time.Second, resetAt: t0.Add(-time.Minute), network: true}},
		},
		{
			name: "conformance 17: events reach the sink and move the RV",
			from: streamOf(newWatcher(ev(httpwatch.Added, obj("a", "2"))), synced("1")), want: phaseStream,
			calls: []string{"add a@2"}, mem: synced("2"),
		},
		{
			name: "conformance 17: modified and deleted",
			from: streamOf(newWatcher(ev(httpwatch.Deleted, obj("a", "3"))), synced("1")), want: phaseStream,
			calls: []string{"delete a@3"}, mem: synced("3"),
		},
		{
			name: "conformance 17, conformance 58: a bookmark moves the RV and changes no object",
			from: streamOf(newWatcher(ev(httpwatch.Bookmark, obj("", "9"))), synced("1")), want: phaseStream,
			mem: synced("9"), // no call: the sink hears of no object
		},
		{
			name: "decision 36: a silent watch resumes without a relist",
			from: func() state {
				err := fmt.Errorf("WATCH /api/v1/pods: %w: nothing from the server for 2m30s", httpwatch.ErrWatchIdle)
				s := streamOf(newWatcher(end(err)), synced("5"))
				s.events = 3
				return s
			}(),
			want: phaseWatch, mem: synced("5"),
		},
		{
			name: "conformance 19: synthetic ADDED of a watch from RV 0 do not move the RV",
			from: func() state {
				s := streamOf(newWatcher(ev(httpwatch.Added, obj("a", "50"))), synced("1"))
				s.fromAny = true
				return s
			}(),
			want: phaseStream, calls: []string{"add a@50"}, mem: synced("1"),
		},
		{
			name: "conformance 20: a clean end after events watches again at once",
			from: func() state { s := streamOf(newWatcher(end(io.EOF)), synced("5")); s.events = 3; return s }(),
			want: phaseWatch, mem: synced("5"),
		},
		{
			name: "a stream cut mid-frame watches again from the last RV",
			from: func() state {
				s := streamOf(newWatcher(end(fmt.Errorf("read frame: %w", io.ErrUnexpectedEOF))), synced("5"))
				s.events = 1
				return s
			}(),
			want: phaseWatch, mem: synced("5"),
		},
		{
			name: "conformance 21: a watch closed in under a second without events relists after a backoff",
			from: streamOf(newWatcher(end(io.EOF)), synced("5")), want: phaseStart, wait: 800 * time.Millisecond,
			mem: backedOff(synced("5")),
		},
		{
			name: "an undecodable stream relists after a backoff",
			from: func() state {
				s := streamOf(newWatcher(end(errors.New("frame exceeds 64 MiB"))), synced("5"))
				s.events = 4
				return s
			}(),
			want: phaseStart, wait: 800 * time.Millisecond, mem: backedOff(synced("5")),
		},
		{
			name: "conformance 13: an ERROR 410 relists (at the last RV) after a backoff",
			from: streamOf(newWatcher(errEv(errExpired)), synced("5")), want: phaseStart, wait: 800 * time.Millisecond,
			mem: backedOff(synced("5")),
		},
		{
			name: "conformance 23: an ERROR 429 watches again after Retry-After",
			from: streamOf(newWatcher(errEv(errThrottle)), synced("5")), want: phaseWatch, wait: 7 * time.Second, mem: synced("5"),
		},
		{
			name: "conformance 23: an ERROR InternalError relists by default",
			from: streamOf(newWatcher(errEv(errInternal)), synced("5")), want: phaseStart, wait: 800 * time.Millisecond,
			mem: backedOff(synced("5")),
		},
		{
			name: "conformance 23: an ERROR InternalError within the retry window watches again at once",
			prep: func(r *Reflector, _ *scriptSource) { r.MaxInternalErrorRetryDuration = time.Minute },
			from: streamOf(newWatcher(errEv(errInternal)), synced("5")), want: phaseWatch,
			mem: memory{lastRV: "5", internal: window{first: t0, last: t0}},
		},
		{
			name: "conformance 23: an ERROR InternalError past the retry window relists",
			prep: func(r *Reflector, _ *scriptSource) { r.MaxInternalErrorRetryDuration = 30 * time.Second },
			from: streamOf(newWatcher(errEv(errInternal)),
				memory{lastRV: "5", internal: window{first: t0.Add(-40 * time.Second), last: t0.Add(-20 * time.Second)}}),
			want: phaseStart, wait: 800 * time.Millisecond,
			mem: backedOff(memory{lastRV: "5", internal: window{first: t0.Add(-40 * time.Second), last: t0}}),
		},
		{
			name: "conformance 27: a watch-list asks for initial events not older than the last RV",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchOf(newWatcher())) },
			from: at(phaseWatchList, synced("10")), want: phaseStream, mem: synced("10"),
			checkOpt: func(t *testing.T, src *scriptSource) {
				o := src.watchOpts[0]
				assert.True(t, o.SendInitialEvents)
				assert.True(t, o.AllowWatchBookmarks)
				assert.Equal(t, "NotOlderThan", o.ResourceVersionMatch)
				assert.Equal(t, "10", o.ResourceVersion)
			},
			check: func(t *testing.T, next state) {
				assert.NotNil(t, next.initial, "the initial events are collected")
				assert.Equal(t, t0.Add(initialWait), next.warnAt, "a first look after 10 quiet seconds")
			},
		},
		{
			name: "conformance 30: a watch-list with the version unavailable reads \"\"",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchOf(newWatcher())) },
			from: at(phaseWatchList, memory{lastRV: "10", rvUnavailable: true}), want: phaseStream,
			mem:      memory{lastRV: "10", rvUnavailable: true},
			checkOpt: func(t *testing.T, src *scriptSource) { assert.Empty(t, src.watchOpts[0].ResourceVersion) },
		},
		{
			name: "conformance 30: a refused watch-list falls back to a list at once",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errBad)) },
			from: at(phaseWatchList, memory{}), want: phaseList,
		},
		{
			name: "conformance 30: a 429 watch-list backs off and tries again",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errThrottle)) },
			from: at(phaseWatchList, memory{}), want: phaseWatchList, wait: 7 * time.Second,
		},
		{
			name: "conformance 30: an Expired watch-list retries at once at RV \"\"",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errExpired)) },
			from: at(phaseWatchList, synced("10")), want: phaseWatchList, mem: memory{lastRV: "10", rvUnavailable: true},
		},
		{
			name: "conformance 28: initial events are held back until the end bookmark",
			from: initialOf(newWatcher(ev(httpwatch.Added, a1)), memory{}), want: phaseStream,
		},
		{
			name: "conformance 28: the end bookmark replaces the sink with the initial events and syncs its RV",
			from: initialOf(newWatcher(ev(httpwatch.Bookmark, endBookmark("9"))), memory{lastRV: "4", rvUnavailable: true}),
			want: phaseStream, calls: []string{"replace 0@9"}, mem: synced("9"),
			check: func(t *testing.T, next state) { assert.Nil(t, next.initial, "the same watch goes on with events") },
		},
		{
			name: "conformance 30: a watch-list stream ending before its bookmark falls back to a list",
			from: initialOf(newWatcher(end(io.EOF)), memory{}), want: phaseList,
		},
		{
			name: "conformance 30: a 410 before the bookmark opens the watch-list again at RV \"\"",
			from: initialOf(newWatcher(errEv(errExpired)), synced("10")), want: phaseWatchList,
			mem: memory{lastRV: "10", rvUnavailable: true},
		},
		{
			name: "conformance 29: a watch-list quiet since the last look warns and looks again later",
			from: func() state {
				s := initialOf(newWatcher(), memory{})
				s.warnAt, s.warnSeen, s.events = t0, 2, 2
				return s
			}(),
			want: phaseStream,
			check: func(t *testing.T, next state) {
				assert.Equal(t, t0.Add(initialWait), next.warnAt)
				assert.Equal(t, 2, next.warnSeen)
			},
		},
		{
			name: "decision 32: a watch resumed from a restored state, still loading, is opened and awaits confirmation",
			prep: func(r *Reflector, src *scriptSource) {
				restoring(false, false)(r, src)
				src.watches = append(src.watches, watchOf(newWatcher()))
			},
			from: at(phaseWatch, loading), want: phaseConfirm, mem: loading,
			check: func(t *testing.T, next state) {
				assert.Equal(t, t0.Add(100*time.Millisecond), next.confirmAt)
				assert.Equal(t, next.confirmAt, next.deadline(), "the alarm rings for it")
			},
		},
		{
			name: "decision 32: a list waits for the restored state's load, then replaces it",
			prep: func(r *Reflector, src *scriptSource) {
				restoring(true, true)(r, src)
				src.pages = append(src.pages, page("80", "", a1))
			},
			from: at(phaseList, loading), want: phaseWatch, calls: []string{"replace 1@80"}, mem: memory{lastRV: "80", cycled: true},
		},
		{
			name: "decision 32: a first event confirms the loaded state, and is read next",
			prep: restoring(true, true),
			from: confirmOf(newWatcher(ev(httpwatch.Modified, obj("a", "78"))), loading),
			want: phaseStream, calls: []string{"confirmed"}, mem: memory{lastRV: "77", cycled: true},
			check: func(t *testing.T, next state) {
				rep, ok := next.feed.next(context.Background(), nil)
				assert.True(t, ok)
				assert.Equal(t, "78", rep.ev.Object.ResourceVersion(), "the first event")
			},
		},
		{
			name: "decision 32: with a resync period the confirmed watch is read ahead, the first event first",
			prep: restoring(true, true),
			from: confirmOf(newWatcher(ev(httpwatch.Modified, obj("a", "78")), ev(httpwatch.Modified, obj("a", "79"))),
				memory{lastRV: "77", cycled: true, unconfirmed: true, resyncAt: t0.Add(time.Minute)}),
			want: phaseStream, calls: []string{"confirmed"}, mem: memory{lastRV: "77", cycled: true, resyncAt: t0.Add(time.Minute)},
			check: func(t *testing.T, next state) {
				for _, rv := range []string{"78", "79"} {
					rep, ok := next.feed.next(context.Background(), nil)
					assert.True(t, ok)
					assert.Equal(t, rv, rep.ev.Object.ResourceVersion())
				}
			},
		},
		{
			name: "decision 32: a first bookmark confirms too",
			prep: restoring(true, true),
			from: confirmOf(newWatcher(ev(httpwatch.Bookmark, obj("", "80"))), unconfirmed),
			want: phaseStream, calls: []string{"confirmed"}, mem: memory{lastRV: "77", cycled: true},
		},
		{
			name: "decision 32: a 410 as the first reply confirms nothing: the stream relists",
			prep: restoring(true, true),
			from: confirmOf(newWatcher(errEv(errExpired)), loading), want: phaseStream, mem: unconfirmed,
			check: func(t *testing.T, next state) { assert.Equal(t, refutes, next.verdict) },
		},
		{
			name: "decision 32: a watch that ends at once confirms nothing",
			prep: restoring(true, true),
			from: confirmOf(newWatcher(end(io.EOF)), unconfirmed), want: phaseStream, mem: unconfirmed,
		},
		{
			name: "decision 32: a watch quiet until ConfirmAfter after its response confirms",
			prep: restoring(true, true),
			from: func() state { s := confirmOf(newWatcher(), unconfirmed); s.confirmAt = t0; return s }(),
			want: phaseStream, calls: []string{"confirmed"}, mem: memory{lastRV: "77", cycled: true},
		},
		{
			name: "decision 32: a state that failed to load is dropped with its watch: a new cycle lists",
			prep: restoring(true, false),
			from: confirmOf(newWatcher(ev(httpwatch.Modified, obj("a", "78"))), loading),
			want: phaseStart, mem: memory{lastRV: "77", cycled: true},
		},
		{
			name: "conformance 25: a due resync reaches the sink and the next one is scheduled",
			prep: resyncEvery,
			from: streamOf(newWatcher(), memory{lastRV: "5", resyncAt: t0}), want: phaseStream,
			calls: []string{"resync"}, mem: memory{lastRV: "5", resyncAt: t0.Add(time.Minute)},
		},
		{
			name: "conformance 25: a resync ShouldResync declines is skipped, the next one scheduled",
			prep: func(r *Reflector, src *scriptSource) {
				resyncEvery(r, src)
				r.ShouldResync = func() bool { return false }
			},
			from: streamOf(newWatcher(), memory{lastRV: "5", resyncAt: t0}), want: phaseStream,
			mem: memory{lastRV: "5", resyncAt: t0.Add(time.Minute)},
		},
		{
			name: "conformance 25: a resync not yet due lets the event through",
			prep: resyncEvery,
			from: streamOf(newWatcher(ev(httpwatch.Modified, obj("a", "6"))), memory{lastRV: "5", resyncAt: t0.Add(time.Second)}),
			want: phaseStream, calls: []string{"update a@6"}, mem: memory{lastRV: "6", resyncAt: t0.Add(time.Second)},
		},
		{
			name: "conformance 25: a failed resync ends the watch and relists after a backoff",
			prep: func(r *Reflector, src *scriptSource) {
				resyncEvery(r, src)
				r.Sink.(*recordSink).resyncErr = errors.New("disk full")
			},
			from: streamOf(newWatcher(), memory{lastRV: "5", resyncAt: t0}), want: phaseStart, wait: 800 * time.Millisecond,
			calls: []string{"resync"}, mem: backedOff(memory{lastRV: "5", resyncAt: t0.Add(time.Minute)}),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := &scriptSource{}
			r, sink, _ := newTestReflector(src)
			if tc.prep != nil {
				tc.prep(r, src)
			}
			from := started(tc.from)
			next, wait := r.step(context.Background(), from)
			if from.feed != nil && next.feed != from.feed {
				assert.True(t, stopped(watcherOf(from.feed)), "a watch left behind is stopped")
			}
			assert.Equal(t, tc.want, next.phase, "next phase")
			assert.Equal(t, tc.mem, next.memory, "what the next state remembers")
			assert.Equal(t, tc.wait, wait, "wait")
			assert.Equal(t, tc.calls, sink.log(), "sink calls")
			if tc.checkOpt != nil {
				tc.checkOpt(t, src)
			}
			if tc.check != nil {
				tc.check(t, next) // the watch still open
			}
			next.closeWatch()
		})
	}
}

var errConnRefused = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}

// The ways the network fails a watch before the server answers, as
// net/http reports them (decision 38).
var (
	errDialTimeout   = &net.OpError{Op: "dial", Net: "tcp", Err: timeoutError("i/o timeout")}
	errTLSHandshake  = fmt.Errorf("WATCH /api/v1/pods: %w", timeoutError("net/http: TLS handshake timeout"))
	errReset         = &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	errNoResponse    = fmt.Errorf("WATCH /api/v1/pods: %w", io.EOF)
	errLost          = fmt.Errorf("WATCH /api/v1/pods: %w: no answer to an HTTP/2 ping", httpwatch.ErrConnectionLost)
	errDNS           = &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "api.example", IsNotFound: true}}
	errUnreachable   = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ENETUNREACH)}
	errHeaderTimeout = fmt.Errorf("WATCH /api/v1/pods: %w within 1m0s", httpwatch.ErrResponseHeaderTimeout)
)

// timeoutError is a net.Error that timed out, as net/http's handshake
// timeout is.
type timeoutError string

func (e timeoutError) Error() string { return string(e) }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// streamOf is a state reading w, opened at t0, remembering m. Its reader
// starts with started, so that a table of cases starts no goroutines.
func streamOf(w *scriptWatcher, m memory) state {
	return state{phase: phaseStream, memory: m, watching: watching{feed: unstarted{w}, opened: t0}}
}

// initialOf is streamOf for a watch-list before its end bookmark.
func initialOf(w *scriptWatcher, m memory) state {
	s := streamOf(w, m)
	s.initial = map[string]*raw.Object{}
	s.warnAt = t0.Add(initialWait)
	return s
}

// confirmOf is a state in phaseConfirm on w, resumed at t0 from a restored
// state, remembering m. Its first reply is read by started.
func confirmOf(w *scriptWatcher, m memory) state {
	return state{phase: phaseConfirm, memory: m,
		watching: watching{feed: unstarted{w}, opened: t0, confirmAt: t0.Add(100 * time.Millisecond)}}
}

// unstarted is the feed of a state made by streamOf until started starts
// the feed the reflector would.
type unstarted struct{ w httpwatch.Watcher }

func (unstarted) next(context.Context, <-chan time.Time) (reply, bool) {
	panic("reflector test: feed not started")
}

func (unstarted) close() {}

// started starts the feed of a state made by streamOf or confirmOf; the
// first reply of a confirmOf watch given steps is in before the step.
func started(s state) state {
	if u, ok := s.feed.(unstarted); ok {
		if s.phase == phaseConfirm {
			s.first = readFirst(u.w)
			if u.w.(*scriptWatcher).scripted() > 0 {
				<-s.first.done
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		s.feed = newFeed(ctx, cancel, u.w, s.resyncAt.IsZero() && s.initial == nil, nil, s.first)
	}
	return s
}

// watcherOf returns the watcher f reads.
func watcherOf(f feed) httpwatch.Watcher {
	switch f := f.(type) {
	case *directFeed:
		return f.w
	case *readAhead:
		return f.w
	case unstarted:
		return f.w
	}
	return nil
}

// stopped reports whether w was stopped.
func stopped(w httpwatch.Watcher) bool {
	sw, ok := w.(*scriptWatcher)
	if !ok {
		return true
	}
	select {
	case <-sw.stopped:
		return true
	default:
		return false
	}
}
