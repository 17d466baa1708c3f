package reflector_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/reflector"
	"github.com/stretchr/testify/require"
)

// jsonSink is a reflector.Sink keeping objects by name, which fails the
// test if anything it is handed is not JSON.
type jsonSink struct {
	t       *testing.T
	mu      sync.Mutex
	objects map[string]*raw.Object
}

func (s *jsonSink) keep(o *raw.Object) {
	if !json.Valid(o.Raw()) {
		s.t.Errorf("invalid JSON reached the cache: %s", o.Raw())
	}
	s.objects[o.Name()] = o
}

func (s *jsonSink) Add(o *raw.Object) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keep(o)
	return nil
}
func (s *jsonSink) Update(o *raw.Object) error { return s.Add(o) }
func (s *jsonSink) Resync() error              { return nil }
func (s *jsonSink) Delete(o *raw.Object) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.objects, o.Name())
	return nil
}

func (s *jsonSink) Replace(items []*raw.Object, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects = map[string]*raw.Object{}
	for _, o := range items {
		s.keep(o)
	}
	return nil
}

func (s *jsonSink) version(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o := s.objects[name]; o != nil {
		return o.ResourceVersion()
	}
	return ""
}

// TestInvalidEventRelistConverges: a watch event whose object is not JSON
// (its brackets balance) ends the watch with a *DecodeError, nothing of it
// reaches the cache, and the relist that follows (conformance 4) brings
// the cache to the server's state.
func TestInvalidEventRelistConverges(t *testing.T) {
	var lists atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if req.URL.Query().Get("watch") == "" {
			if lists.Add(1) == 1 {
				io.WriteString(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"10"},"items":[]}`)
				return
			}
			io.WriteString(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"12"},"items":[{"metadata":{"name":"b","resourceVersion":"12"},"spec":{"a":1}}]}`)
			return
		}
		if lists.Load() > 1 {
			<-req.Context().Done() // the second watch: quiet
			return
		}
		io.WriteString(w, `{"type":"ADDED","object":{"metadata":{"name":"b","resourceVersion":"11"},"spec":{"a":0}}}`+"\n")
		io.WriteString(w, `{"type":"MODIFIED","object":{"metadata":{"name":"b","resourceVersion":"12"},"spec":{"a" 1}}}`+"\n")
	}))
	t.Cleanup(srv.Close)
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL, QPS: -1, Timeout: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)

	sink := &jsonSink{t: t, objects: map[string]*raw.Object{}}
	r := reflector.New(c.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"}), sink)
	r.PagedList = true
	fc := clock.NewFake(time.Unix(1000, 0))
	r.Clock = fc
	r.Random = func() float64 { return 0 }
	errs := make(chan error, 10)
	r.OnError = func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	select {
	case err := <-errs:
		var de *httpwatch.DecodeError
		require.True(t, errors.As(err, &de), "%v", err)
		require.ErrorContains(t, err, "event 2")
		require.ErrorContains(t, err, "invalid JSON")
	case <-ctx.Done():
		t.Fatal("the invalid event was not reported")
	}
	require.Equal(t, "11", sink.version("b"), "the event before the invalid one was applied, the invalid one not")
	require.NoError(t, fc.WaitForWaiters(ctx, 1), "the reflector backs off before relisting")
	fc.Step(time.Minute)
	require.Eventually(t, func() bool { return sink.version("b") == "12" }, 10*time.Second, time.Millisecond,
		"the relist brings the cache to the server's state")
}
