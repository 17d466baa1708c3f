package watchtest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"

	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/httpwatch"
)

// Defaults that NewUnstartedServer puts in a Server's fields.
const (
	DefaultBookmarkInterval = time.Minute
	DefaultWatchBuffer      = 1000
	DefaultTooLargeWait     = 100 * time.Millisecond
)

// A Server is an in-memory Kubernetes API server listening on a system-chosen
// port on the local loopback interface, for use in end-to-end HTTP tests.
//
// The embedded httptest.Server provides URL, Client, Certificate,
// CloseClientConnections (every connection drops at once, as when the
// process dies) and the rest; Start, StartTLS and Close are Server's own.
//
// The exported fields configure the server; set them before Start and do
// not change them afterwards. Every method is safe for concurrent use, and
// objects can be created, changed and deleted from Go before and after
// Start.
type Server struct {
	*httptest.Server

	// Clock times bookmarks, watch timeouts and the wait for a future
	// resourceVersion. Tests may use clock.NewFake; the periodic bookmarks
	// then hold one of its timers while BookmarkInterval is not 0.
	Clock clock.Clock

	// BookmarkInterval is how often a BOOKMARK goes to every watch that
	// allowed bookmarks. 0 sends them only when SendBookmarks is called.
	BookmarkInterval time.Duration

	// WatchBuffer is how many events an open watch may have waiting to be
	// written. A watch whose client reads too slowly for that is ended,
	// as the real server ends it, instead of slowing every writer down.
	WatchBuffer int

	// TooLargeWait is how long a request for a resourceVersion the server
	// has not reached waits for it before failing with 504 and cause
	// ResourceVersionTooLarge.
	TooLargeWait time.Duration

	// ExpiredWatchAsStatus answers a watch from a compacted
	// resourceVersion with HTTP 410. By default the answer is HTTP 200 and
	// one ERROR event carrying the 410 Status. Real servers do both.
	ExpiredWatchAsStatus bool

	// HistoryLimit bounds how many changes each resource remembers; older
	// ones are forgotten as by Compact, but per resource, like a watch
	// cache. 0 keeps everything until Compact.
	HistoryLimit int

	// Version is what /version answers; its zero fields are
	// kube-apiserver 1.37.2's.
	Version apiserve.Version

	mu       sync.Mutex
	rv       int64
	floor    int64 // the last Compact
	stores   map[string]*store
	withheld map[string]bool // built-in resources not served (Withhold)
	seq      int64           // for uids and generated names
	changed  chan struct{}   // closed and replaced whenever rv moves
	watchers chan struct{}   // closed and replaced whenever a watch opens or ends
	open     int             // open watches
	closing  chan struct{}
	closed   bool
	faults   faults

	startOnce sync.Once
	closeOnce sync.Once
	stopLoop  chan struct{}
	loopDone  chan struct{}
}

// NewServer starts and returns a new Server with the resources pods,
// configmaps, namespaces and deployments. The caller should call Close when finished.
func NewServer() *Server {
	s := NewUnstartedServer()
	s.Start()
	return s
}

// NewUnstartedServer returns a new Server, with its fields at their
// defaults, that is not yet listening. Set fields, then call Start or
// StartTLS.
func NewUnstartedServer() *Server {
	s := &Server{
		Clock:            clock.Real,
		BookmarkInterval: DefaultBookmarkInterval,
		WatchBuffer:      DefaultWatchBuffer,
		TooLargeWait:     DefaultTooLargeWait,
		rv:               1, // like etcd, the first write gets 2
		stores:           map[string]*store{},
		changed:          make(chan struct{}),
		watchers:         make(chan struct{}),
		closing:          make(chan struct{}),
		stopLoop:         make(chan struct{}),
		loopDone:         make(chan struct{}),
	}
	for _, r := range []httpwatch.Resource{Pods, ConfigMaps, Namespaces, Deployments} {
		s.AddResource(r, Definition{})
	}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	return s
}

// Start starts the server from NewUnstartedServer.
func (s *Server) Start() {
	s.Server.Start()
	s.startLoop()
}

// StartTLS starts TLS on the server from NewUnstartedServer.
func (s *Server) StartTLS() {
	s.Server.StartTLS()
	s.startLoop()
}

func (s *Server) startLoop() {
	s.startOnce.Do(func() {
		if s.Clock == nil {
			s.Clock = clock.Real
		}
		if s.WatchBuffer <= 0 {
			s.WatchBuffer = DefaultWatchBuffer
		}
		if s.BookmarkInterval <= 0 {
			close(s.loopDone)
			return
		}
		go s.bookmarkLoop()
	})
}

func (s *Server) bookmarkLoop() {
	defer close(s.loopDone)
	t := s.Clock.NewTimer(s.BookmarkInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C():
			s.SendBookmarks()
			t.Reset(s.BookmarkInterval)
		case <-s.stopLoop:
			return
		}
	}
}

// Close ends every open watch, shuts down the server and blocks until all
// its requests and goroutines have finished.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		close(s.closing)
		for _, st := range s.stores {
			for w := range st.watchers {
				s.endWatchLocked(w)
			}
		}
		s.mu.Unlock()
		close(s.stopLoop)
		s.startOnce.Do(func() { close(s.loopDone) }) // never started
		<-s.loopDone
	})
	s.Server.Close()
}

// AddResource serves resource r as d says, as installing a
// CustomResourceDefinition does; r's Namespace is not used. A built-in
// resource watchtest knows (Leases, ReplicaSets, StatefulSets, Events)
// takes the zero Definition and is served as the real server serves it;
// the Go methods add such a resource on first use too. Adding a resource
// that exists does nothing. HTTP clients get 404 for a resource nobody
// added. AddResource panics on a zero Definition for a resource that is
// not built in, a mistake in the test.
//
//	s.AddResource(watchtest.Leases, watchtest.Definition{})
//	s.AddResource(widgets, watchtest.Definition{Kind: "Widget", Namespaced: true})
func (s *Server) AddResource(r httpwatch.Resource, d Definition) {
	res, err := definedAs(r, d)
	if err != nil {
		panic(err.Error())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.storeLocked(res)
}

// served is the resource r addresses, adding a built-in one on first use.
// It fails, wrapping discovery.ErrUnknownResource, for a resource the
// server neither serves nor has built in.
func (s *Server) served(r httpwatch.Resource) (resource, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.stores[id(r)]; ok {
		return st.res, nil
	}
	d, ok := builtIn[id(r)]
	if !ok {
		d, ok = catalogued(r)
	}
	if !ok {
		return resource{}, fmt.Errorf("watchtest: %s: %w (call AddResource with its Definition first)", r, discovery.ErrUnknownResource)
	}
	res := resource{Group: r.Group, Version: r.Version, Resource: r.Resource, Definition: d}
	s.storeLocked(res)
	return res, nil
}

// Withhold makes the server one without the built-in resources rs, as an
// older or trimmed-down API server is: they leave discovery and their
// paths answer 404, however the server was told of them before.
func (s *Server) Withhold(rs ...httpwatch.Resource) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.withheld == nil {
		s.withheld = map[string]bool{}
	}
	for _, r := range rs {
		s.withheld[id(r)] = true
		delete(s.stores, id(r))
	}
}

func (s *Server) storeLocked(r resource) *store {
	st, ok := s.stores[r.id()]
	if !ok {
		st = newStore(r)
		s.stores[r.id()] = st
	}
	return st
}

// ResourceVersion returns the server's current resourceVersion: that of
// its latest write.
func (s *Server) ResourceVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strconv.FormatInt(s.rv, 10)
}

// Compact forgets history at and below resourceVersion rv, as etcd
// compaction does: a watch from an older resourceVersion, an exact list at
// one, and a continue token from one get 410 Expired. rv beyond the current
// resourceVersion compacts everything.
func (s *Server) Compact(rv string) error {
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || n < 0 {
		return badRequest("watchtest: compact: resourceVersion %q is not a non-negative integer", rv)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n = min(n, s.rv)
	if n <= s.floor {
		return nil
	}
	s.floor = n
	for _, st := range s.stores {
		st.compact(n)
	}
	return nil
}

// floorOf is the oldest resourceVersion a resource can still serve a watch
// or exact list from.
func (s *Server) floorOf(st *store) int64 { return max(s.floor, st.floor) }

// commitLocked records a change whose object already carries the new
// resourceVersion, and wakes every watch of the resource. A watch more
// than WatchBuffer events behind is ended rather than waited for.
func (s *Server) commitLocked(st *store, c *change) {
	st.record(c)
	st.limitHistory(s.HistoryLimit)
	for w := range st.watchers {
		if w.lagging(s.WatchBuffer) {
			s.endWatchLocked(w)
		}
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

// nextRVLocked advances the global resourceVersion for one write.
func (s *Server) nextRVLocked() int64 {
	s.rv++
	return s.rv
}

// waitForRV waits up to TooLargeWait for the server to reach rv. It
// reports the current resourceVersion and whether rv was reached.
func (s *Server) waitForRV(ctx context.Context, rv int64) (int64, bool) {
	var t clock.Timer
	for {
		s.mu.Lock()
		cur, changed := s.rv, s.changed
		s.mu.Unlock()
		if cur >= rv {
			return cur, true
		}
		if t == nil {
			if s.TooLargeWait <= 0 {
				return cur, false
			}
			t = s.Clock.NewTimer(s.TooLargeWait)
			defer t.Stop()
		}
		select {
		case <-changed:
		case <-t.C():
			return cur, false
		case <-ctx.Done():
			return cur, false
		case <-s.closing:
			return cur, false
		}
	}
}
