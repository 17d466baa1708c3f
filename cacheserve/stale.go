package cacheserve

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/reflector"
)

// health is what the served informers have heard of the API server
// (decision 45): the cache may be behind it once a list or watch failed
// and nothing was heard since. Failures and hearings are ordered by a
// sequence, not by the clock, which a test may hold still.
type health struct {
	mu        sync.Mutex
	seq       int64
	heardSeq  int64
	failedSeq int64
	heardAt   time.Time // when last heard; zero if never since the start
	held      atomic.Int64
}

func (h *health) hear(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	h.heardSeq, h.heardAt = h.seq, now
}

func (h *health) fail() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	h.failedSeq = h.seq
}

// unheard reports whether a failure came after the last hearing, and
// when that was.
func (h *health) unheard() (bool, time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.failedSeq > h.heardSeq, h.heardAt
}

// Stats is how current a Server's caches are, and what it forwarded.
type Stats struct {
	// Stale is whether what is served may differ from the API server: an
	// informer failed to list or watch and has not heard from it since,
	// serves a restored snapshot the API server has not confirmed yet, or
	// holds back a list behind what was served. Every response then
	// carries a Warning (decision 45).
	Stale bool
	// LastHeard is when an informer last heard from the API server (an
	// event, a list, a bookmark); zero if none has since the start.
	LastHeard time.Time
	// HeldRelists counts the lists from the API server at a lower
	// resourceVersion than one already served, held back until the API
	// server passes it (decision 45).
	HeldRelists int64
	// Proxy is the Proxy's counters; zero without one.
	Proxy ProxyStats
}

// Stats returns how current the caches are, for a metric of staleness
// (seconds since LastHeard while Stale) and of what was forwarded.
func (s *Server) Stats() Stats {
	stale, _ := s.stale()
	_, at := s.upstream.unheard()
	st := Stats{Stale: stale, LastHeard: at, HeldRelists: s.upstream.held.Load()}
	if s.Proxy != nil {
		st.Proxy = s.Proxy.Stats()
	}
	return st
}

// stale reports whether what is served may be behind the API server, and
// the Warning that says so.
func (s *Server) stale() (bool, string) {
	if unheard, at := s.upstream.unheard(); unheard {
		since := "this cache started"
		if !at.IsZero() {
			since = at.UTC().Format(time.RFC3339)
		}
		return true, `299 - "listwatch cache: the API server has not been heard from since ` + since + `; what is served may be stale"`
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, sv := range s.byRes {
		if sv.guard == nil {
			continue // not added by Add: no informer to hear from
		}
		if at := sv.guard.holding.Load(); at > 0 {
			return true, `299 - "listwatch cache: the API server went back to a resourceVersion below ` + strconv.FormatInt(at, 10) +
				`, which this cache served; serving its own state until the API server passes it"`
		}
		if _, synced := sv.cache.ResourceVersion(); synced && !sv.inf.HasSynced() {
			return true, `299 - "listwatch cache: serving ` + sv.res.Resource + ` from a snapshot the API server has not confirmed yet; what is served may be stale"`
		}
	}
	return false, ""
}

// warnIfStale puts the staleness Warning on a response, as kube-apiserver
// writes its warnings (299, no agent, quoted text).
func (s *Server) warnIfStale(w http.ResponseWriter) {
	if stale, warning := s.stale(); stale {
		w.Header().Add("Warning", warning)
	}
}

// mirror puts the guard of sv's cache in front of it as inf's Mirror, and
// hears inf's failures to list or watch (wrapping its OnError, which is
// still called).
func (s *Server) mirror(inf *listwatch.Informer, sv *served) {
	g := &guard{cache: sv.cache, inf: inf, s: s}
	sv.guard = g
	inf.Mirror = g
	next := inf.OnError
	inf.OnError = func(err error) {
		var se *reflector.SyncError
		if errors.As(err, &se) && !se.Routine && se.Op != reflector.OpSink && se.Op != reflector.OpResync {
			s.upstream.fail()
		}
		if next != nil {
			next(err)
		}
	}
}

// guard keeps the versions a cache serves from going backwards (decision
// 45). A list from the API server at a lower resourceVersion than the
// cache has served (an API server restored from a backup, or another
// one) is held back, with the changes that follow it, while the cache
// goes on serving what it had (stale, and said so); once the API server
// passes the version served, the held state replaces the cache's, which
// ends every local watch with a 410, so that clients relist at a version
// above any they saw. It also tells the server's health each time the
// informer hears from the API server.
type guard struct {
	cache *Cache
	inf   *listwatch.Informer
	s     *Server
	// held is the API server's state while it is behind, at heldRV; nil
	// when it is not. The reflector's goroutine alone uses them.
	held   map[string]*raw.Object
	heldRV int64
	// holding is the version served when the API server went behind it,
	// while it is; 0 when not. For the Warning.
	holding atomic.Int64
	// listed is set once a list reached the guard: the first of a warm
	// start is its restored snapshot, which is not hearing from the API
	// server.
	listed bool
}

// heard tells the server's health that the API server spoke: any change
// or bookmark once the informer has synced, any list but a restored
// snapshot.
func (g *guard) heard() {
	if g.inf.HasSynced() {
		g.s.upstream.hear(g.s.clock().Now())
	}
}

func (g *guard) heardList() {
	first := !g.listed
	g.listed = true
	if !first || g.inf.Snapshot.Dir == "" || g.inf.HasSynced() {
		g.s.upstream.hear(g.s.clock().Now())
	}
}

func (g *guard) Add(obj *raw.Object) error {
	g.heard()
	if g.held != nil {
		return g.hold(obj, false)
	}
	return g.cache.Add(obj)
}

func (g *guard) Update(obj *raw.Object) error {
	g.heard()
	if g.held != nil {
		return g.hold(obj, false)
	}
	return g.cache.Update(obj)
}

func (g *guard) Delete(obj *raw.Object) error {
	g.heard()
	if g.held != nil {
		return g.hold(obj, true)
	}
	return g.cache.Delete(obj)
}

func (g *guard) Resync() error { return nil }

// Replace passes a list on, or holds it back if it is behind what the
// cache has served.
func (g *guard) Replace(items []*raw.Object, resourceVersion string) error {
	g.heardList()
	rv, err := parseRV(resourceVersion)
	served, synced := g.cache.ResourceVersion()
	if err != nil || !synced || rv >= served {
		g.held = nil
		g.holding.Store(0)
		return g.cache.Replace(items, resourceVersion)
	}
	g.held = make(map[string]*raw.Object, len(items))
	for _, o := range items {
		g.held[key(o)] = o
	}
	g.heldRV = rv
	g.holding.Store(served)
	g.s.upstream.held.Add(1)
	return nil
}

// Progress moves the version to a bookmark's.
func (g *guard) Progress(resourceVersion string) {
	g.heard()
	if g.held == nil {
		g.cache.Progress(resourceVersion)
		return
	}
	if rv, err := parseRV(resourceVersion); err == nil {
		g.heldRV = max(g.heldRV, rv)
		_ = g.release() // a list at a version cannot fail
	}
}

// hold applies a change to the held state.
func (g *guard) hold(obj *raw.Object, del bool) error {
	rv, err := parseRV(obj.ResourceVersion())
	if err != nil {
		return err
	}
	if del {
		delete(g.held, key(obj))
	} else {
		g.held[key(obj)] = obj
	}
	g.heldRV = max(g.heldRV, rv)
	return g.release()
}

// release hands the held state to the cache once it is ahead of what the
// cache served.
func (g *guard) release() error {
	if served, _ := g.cache.ResourceVersion(); g.heldRV <= served {
		return nil
	}
	items := make([]*raw.Object, 0, len(g.held))
	for _, o := range g.held {
		items = append(items, o)
	}
	g.held = nil
	g.holding.Store(0)
	return g.cache.Replace(items, strconv.FormatInt(g.heldRV, 10))
}
