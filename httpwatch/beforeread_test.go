package httpwatch

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/listwatch/listwatch/internal/apitest"
	"github.com/listwatch/listwatch/internal/testwait"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// BeforeRead is called before every read of the stream, once the events
// already read have all been returned: here the server sends its fourth
// event only once the hook has run with three returned, so a watcher that
// read (and blocked) without calling it first would never see the fourth.
func TestWatchBeforeReadAnnouncesEveryRead(t *testing.T) {
	more := make(chan struct{})
	sent := more // the handler's copy; the hook forgets more once closed
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		for range 3 {
			io.WriteString(w, podFrame)
		}
		w.(http.Flusher).Flush()
		select {
		case <-sent:
		case <-time.After(10 * time.Second): // fail with the assertion, not a hang
		case <-r.Context().Done():
		}
		io.WriteString(w, podFrame)
	})
	wt, err := newTestClient(t, srv.URL).Resource(pods).Watch(testwait.Context(t), ListOptions{})
	require.NoError(t, err)
	defer wt.Stop()
	returned := 0
	var announced []int // events returned at each announced read
	wt.(interface{ BeforeRead(func()) }).BeforeRead(func() {
		announced = append(announced, returned)
		if returned == 3 && more != nil {
			close(more)
			more = nil
		}
	})
	for range 4 {
		_, err := wt.Next()
		require.NoError(t, err)
		returned++
	}
	_, err = wt.Next()
	require.ErrorIs(t, err, io.EOF)
	require.NotEmpty(t, announced)
	assert.Equal(t, 0, announced[0], "the first read is announced")
	assert.Contains(t, announced, 3, "the read after the first three events is announced before it blocks")
}
