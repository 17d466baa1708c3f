package watchtest

import (
	"net/url"
	"slices"
	"time"
)

// Failure is an error the server answers with instead of serving a request,
// armed with FailNext.
type Failure struct {
	// Code is the HTTP status, e.g. 429, 500, 503, 410 or 504.
	Code int
	// Reason and Message fill the Status; by default they are what the
	// real server says for Code.
	Reason, Message string
	// RetryAfter, rounded up to whole seconds, goes into the Retry-After
	// header and details.retryAfterSeconds. The real server sends 1s with
	// its 429s.
	RetryAfter time.Duration
	// The failure hits only requests that match every one of the
	// following that is set.
	//
	// Verbs limits it to requests of these verbs: "get", "list",
	// "watch", "create", "update", "patch", "delete", "deletecollection".
	Verbs []string
	// PatchTypes limits it to patches of these media types, such as
	// "application/apply-patch+yaml" (server-side apply) or
	// "application/merge-patch+json".
	PatchTypes []string
	// Subresources limits it to requests to these subresources ("status",
	// "scale"); "" in the list stands for the object itself.
	Subresources []string
	// Namespace and Name limit it to requests addressing this namespace
	// and this object.
	Namespace, Name string
	// Match, when set, has the last word on each request the rest let
	// through. It is called with the server's lock held: it must not call
	// the Server.
	Match func(Request) bool
	// Times is how many matching requests fail; 0 means one.
	Times int
	// InStream makes a watch request succeed with HTTP 200 and then carry
	// the Status as a single ERROR event, as a real server reports errors
	// found after the stream started.
	InStream bool
}

// Request is one request the server received, for assertions.
type Request struct {
	Time   time.Time // by the server's Clock
	Method string
	Path   string
	Query  url.Values
	// Verb is "get", "list", "watch", "create", "update", "patch",
	// "delete" or "deletecollection", or "" when the path names no
	// resource.
	Verb string
	// Subresource is "status" or "scale" for a request to one, else "".
	Subresource string
	// Namespace and Name are those the path addresses, "" when it
	// addresses none.
	Namespace, Name string
	// PatchType is the media type of a patch, without parameters, such as
	// "application/apply-patch+yaml"; "" for other requests.
	PatchType string
}

// faults is the fault-injection state, guarded by the Server's lock.
type faults struct {
	failures        []Failure
	cuts            []cut
	chunk           int
	pause           func()
	refuseWatchList bool
	log             []Request
}

// cut is where an armed watch breaks; -1 means not by that measure.
type cut struct {
	bytes, events int
}

var noCut = cut{bytes: -1, events: -1}

// FailNext makes the next f.Times requests that match f fail with f.
// Failures armed earlier are used first:
//
//	s.FailNext(watchtest.Failure{Code: 500, Verbs: []string{"patch"}, PatchTypes: []string{"application/apply-patch+yaml"}})
func (s *Server) FailNext(f Failure) {
	if f.Times <= 0 {
		f.Times = 1
	}
	f.Verbs = slices.Clone(f.Verbs)
	f.PatchTypes = slices.Clone(f.PatchTypes)
	f.Subresources = slices.Clone(f.Subresources)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.failures = append(s.faults.failures, f)
}

// matches reports whether the failure is meant for r.
func (f *Failure) matches(r Request) bool {
	switch {
	case len(f.Verbs) > 0 && !slices.Contains(f.Verbs, r.Verb),
		len(f.PatchTypes) > 0 && !slices.Contains(f.PatchTypes, r.PatchType),
		len(f.Subresources) > 0 && !slices.Contains(f.Subresources, r.Subresource),
		f.Namespace != "" && f.Namespace != r.Namespace,
		f.Name != "" && f.Name != r.Name:
		return false
	}
	return f.Match == nil || f.Match(r)
}

func (s *Server) takeFailure(r Request) (Failure, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.faults.failures {
		f := &s.faults.failures[i]
		if !f.matches(r) {
			continue
		}
		taken := *f
		if f.Times--; f.Times == 0 {
			s.faults.failures = slices.Delete(s.faults.failures, i, i+1)
		}
		return taken, true
	}
	return Failure{}, false
}

// CutNextWatchAfterBytes makes the next watch request's connection drop
// after n bytes of its body, wherever that falls, mid-frame included, as a
// network failure would. The client sees an unexpected EOF.
func (s *Server) CutNextWatchAfterBytes(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.cuts = append(s.faults.cuts, cut{bytes: max(n, 0), events: -1})
}

// CutNextWatchAfterEvents makes the next watch request's connection drop
// right after its n-th event (bookmarks count), without the end of the
// chunked body.
func (s *Server) CutNextWatchAfterEvents(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.cuts = append(s.faults.cuts, cut{bytes: -1, events: max(n, 0)})
}

func (s *Server) takeCut() cut {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.faults.cuts) == 0 {
		return noCut
	}
	c := s.faults.cuts[0]
	s.faults.cuts = s.faults.cuts[1:]
	return c
}

// SlowWatches makes every watch write each event from now on in pieces of
// at most chunk bytes, flushing each piece and calling pause between two
// pieces. pause may block, for instance on a channel the test controls;
// Close waits for it. chunk ≤ 0 turns slow writing off.
func (s *Server) SlowWatches(chunk int, pause func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.chunk, s.faults.pause = chunk, pause
	if chunk <= 0 || pause == nil {
		s.faults.chunk, s.faults.pause = 0, nil
	}
}

func (s *Server) slow() (int, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults.chunk, s.faults.pause
}

// RefuseWatchList makes the server reject sendInitialEvents as a server
// without the WatchList feature does: 422 Invalid, before any stream
// starts. Clients are expected to fall back to a paginated list.
func (s *Server) RefuseWatchList(refuse bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.refuseWatchList = refuse
}

// Requests returns every request received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.faults.log))
	for i, r := range s.faults.log {
		r.Query = cloneValues(r.Query)
		out[i] = r
	}
	return out
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

func (s *Server) logRequest(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Time = s.Clock.Now()
	s.faults.log = append(s.faults.log, r)
}
