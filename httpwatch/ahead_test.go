package httpwatch

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/testkit/apitest"
)

// A watch frames its stream on a goroutine of its own, ahead of Next. Stop
// must end that goroutine wherever it is: here it has framed far more than
// Next took and waits to hand over more, while the server keeps the stream
// open. goleak (TestMain) checks that nothing is left (decision 35).
func TestWatchStopEndsFramingAhead(t *testing.T) {
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, strings.Repeat(podFrame, 20000))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	w, err := newTestClient(t, srv.URL).Resource(pods).Watch(t.Context(), ListOptions{})
	require.NoError(t, err)
	_, err = w.Next()
	require.NoError(t, err)
	sw := w.(*streamWatcher)
	require.Eventually(t, func() bool { return len(sw.batches) == framedAhead }, 10*time.Second, time.Millisecond,
		"the framing goroutine fills the hand-off and waits")
	stopped := make(chan struct{})
	go func() {
		w.Stop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Stop did not return: the framing goroutine was not ended")
	}
	_, err = w.Next()
	assert.Equal(t, io.EOF, err)
}

// The events framed before a broken one are all delivered, in order, and
// then the error, naming the broken event (decision 35).
func TestWatchDeliversFramedEventsBeforeTheError(t *testing.T) {
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, strings.Repeat(podFrame, 500)+`{"type":"ADDED","object":{"a" 1}}`+podFrame)
	})
	w := openWatch(t, newTestClient(t, srv.URL).Resource(pods))
	for i := range 500 {
		ev, err := w.Next()
		require.NoError(t, err, "event %d", i+1)
		require.Equal(t, "a", ev.Object.Name())
	}
	_, err := w.Next()
	var de *DecodeError
	require.True(t, errors.As(err, &de), "%v", err)
	assert.Contains(t, err.Error(), "event 501")
	_, again := w.Next()
	assert.Equal(t, err, again, "the error is sticky")
}
