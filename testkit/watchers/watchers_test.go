package watchers_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"

	"github.com/listwatch/listwatch/testkit/watchers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Every watcher reads every line, each line handed to read whole, and the
// watches are closed by the test's cleanup though the server holds them.
func TestEveryWatcherReadsEveryLine(t *testing.T) {
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := range 3 {
			fmt.Fprintf(w, `{"type":"ADDED","n":%d}`+"\n", i)
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-hold:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(hold) })
	var lines atomic.Int64
	t.Run("watch", func(t *testing.T) {
		ws := watchers.Start(t, srv.URL, 5, 3, func(w int, line []byte) {
			assert.Contains(t, string(line), `"type":"ADDED"`)
			lines.Add(1)
		})
		ws.Wait()
	})
	assert.Equal(t, int64(15), lines.Load())
}
