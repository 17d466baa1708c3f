package listwatch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/indexer"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// badFrameServer lists one pod; its first watch sends one good event and
// then a frame of an unknown type; later watches stay open and quiet.
func badFrameServer() *httptest.Server {
	var watches atomic.Int64
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "" {
			fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},`+
				`"items":[{"metadata":{"name":"a","namespace":"ns","resourceVersion":"5"}}]}`)
			return
		}
		if watches.Add(1) > 1 {
			<-r.Context().Done()
			return
		}
		fmt.Fprint(w, `{"type":"ADDED","object":{"metadata":{"name":"b","namespace":"ns","resourceVersion":"6"}}}`+"\n")
		fmt.Fprint(w, `{"type":"BOGUS","object":{"metadata":{"name":"c","namespace":"ns","resourceVersion":"7"}}}`+"\n")
	}))
}

// decision 6, conformance 3, 4: a watch stream that cannot be decoded is an
// error the informer's watch error handler sees, as a *SyncError wrapping
// the *DecodeError, and Stats counts it.
func TestInformerReportsDecodeErrors(t *testing.T) {
	s := badFrameServer()
	defer s.Close()
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL, QPS: -1})
	require.NoError(t, err)
	defer client.CloseIdleConnections()

	inf := NewInformer(client.Resource(podsRes), 0)
	inf.Reflector.PagedList = true
	// After the error the reflector waits on this clock, which never moves.
	inf.Clock = clock.NewFake(time.Unix(0, 0))
	inf.Reflector.Backoff = reflector.Backoff{Initial: time.Second}
	errs := make(chan error, 10)
	inf.OnError = func(err error) { errs <- err }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	defer func() { cancel(); testwait.Recv(t, done, "Run to return after cancel") }()

	var got error
	select {
	case got = <-errs:
	case <-time.After(wait):
		t.Fatal("the watch error handler saw nothing")
	}
	var se *reflector.SyncError
	require.ErrorAs(t, got, &se)
	assert.Equal(t, reflector.OpWatch, se.Op)
	var de *httpwatch.DecodeError
	assert.ErrorAs(t, got, &de)
	assert.ErrorContains(t, got, "invalid watch event type")
	assert.EqualValues(t, 1, inf.Stats().Errors)
	require.Eventually(t, func() bool { return inf.Indexer().Len() == 2 }, wait, time.Millisecond,
		"the event before the bad frame is kept")
}

// decision 6: a change the cache refuses (here an index function fails) is
// reported to the watch error handler too, not only logged.
func TestInformerReportsApplyErrors(t *testing.T) {
	src := newMemSource()
	src.put("ns", "a", "web")
	inf, run := startInformer(t, src, 0)
	errIndex := errors.New("cannot index")
	require.NoError(t, inf.AddIndexers(indexer.Indexers[*Object]{"strict": func(o *Object) ([]string, error) {
		if o.Name() == "bad" {
			return nil, errIndex
		}
		return nil, nil
	}}))
	errs := make(chan error, 10)
	inf.OnError = func(err error) { errs <- err }
	run()
	require.Eventually(t, inf.HasSynced, wait, time.Millisecond)
	src.put("ns", "bad", "web")
	select {
	case err := <-errs:
		assert.ErrorIs(t, err, errIndex)
	case <-time.After(wait):
		t.Fatal("the watch error handler did not see the refused change")
	}
}
