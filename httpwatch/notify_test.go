package httpwatch

import (
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/testkit/apitest"
)

// A watch announces each read of its body before making it, so that a
// reader holding work back (an informer's handler wake-ups) can hand it on
// before Next waits for the server: here the server sends the third event
// only once the reader has been told, after the second, that Next reads
// (decision 33).
func TestWatchNotifiesBeforeReading(t *testing.T) {
	more := make(chan struct{})
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, podFrame+podFrame)
		w.(http.Flusher).Flush()
		select {
		case <-more:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, podFrame)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	w := openWatch(t, newTestClient(t, srv.URL).Resource(pods))
	seen := 0 // events Next returned; Next and the notification share this goroutine
	var readsAfter []int
	var once sync.Once
	w.NotifyRead(func() {
		readsAfter = append(readsAfter, seen)
		if seen == 2 {
			once.Do(func() { close(more) })
		}
	})
	for range 3 {
		_, err := w.Next()
		require.NoError(t, err, "the third event comes only after the notification")
		seen++
	}
	// Only a Next that waits announces it: whether the first one did
	// depends on whether the framing goroutine, started by it, had the
	// first events ready before it looked (a race the test must not bet
	// on); the third event cannot come without a wait after the second.
	require.NotEmpty(t, readsAfter)
	assert.Contains(t, readsAfter, 2)

	w.NotifyRead(nil)
	w.Stop()
	_, err := w.Next()
	assert.Equal(t, io.EOF, err)
}
