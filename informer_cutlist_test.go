package listwatch

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/testkit/apitest"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

// cutList answers a list with a 200 and the start of its body, then ends
// the connection: closed (the client reads an unexpected EOF) or, with
// reset, reset.
func cutList(t *testing.T, w http.ResponseWriter, reset bool) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	require.NoError(t, err)
	body := `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[{"metadata":`
	fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n%s", body)
	require.NoError(t, buf.Flush())
	if tcp, ok := conn.(*net.TCPConn); ok && reset {
		require.NoError(t, tcp.SetLinger(0)) // close sends a reset
	}
	require.NoError(t, conn.Close())
}

// decision 20: a list cut by the connection's end (EOF or a reset) is no
// routine error, unlike a cut watch, which resumes where it was: the list
// must be made again from the start. It is logged at Warn; the recovery
// line names the last failure, the cut, not the 500 before it.
func TestInformerCutListIsNotRoutine(t *testing.T) {
	for name, tc := range map[string]struct {
		reset   bool
		lastErr string
	}{
		"eof":   {false, "unexpected EOF"},
		"reset": {true, "connection reset by peer"},
	} {
		t.Run(name, func(t *testing.T) {
			s := watchtest.NewServer()
			t.Cleanup(s.Close)
			_, err := s.Create(watchtest.Pods, `{"metadata":{"name":"a","namespace":"ns"}}`)
			require.NoError(t, err)
			var mu sync.Mutex
			lists := 0
			gate := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
				list := r.URL.Query().Get("watch") == ""
				mu.Lock()
				if list {
					lists++
				}
				n := lists
				mu.Unlock()
				switch {
				case list && n == 1:
					http.Error(w, "etcd timeout", http.StatusInternalServerError)
				case list && n == 2:
					cutList(t, w, tc.reset)
				default:
					proxyTo(t, s.URL, w, r)
				}
			})
			inf, log := loudInformer(t, gate.URL, "")
			inf.Reflector.PagedList = true
			runInBackground(t, inf)
			require.NoError(t, inf.Wait(testwait.Context(t)))
			require.Eventually(t, func() bool { return len(log.Above()) >= 3 }, wait, time.Millisecond, "%q", log.Above())
			lines := log.Above()
			require.Len(t, lines, 3, "%q", lines)
			assert.True(t, strings.HasPrefix(lines[0], "WARN reflector: list failed resource=pods"), lines[0])
			assert.Contains(t, lines[0], "code=500")
			assert.True(t, strings.HasPrefix(lines[1], "WARN reflector: list failed resource=pods"), "a cut list is worth a Warn: %s", lines[1])
			assert.Contains(t, lines[1], tc.lastErr)
			assert.True(t, strings.HasPrefix(lines[2], "INFO reflector: recovered after 2 failures resource=pods failures=2 last_error="), lines[2])
			assert.Contains(t, lines[2], tc.lastErr, "last_error is the latest failure")
			assert.NotContains(t, lines[2], "500")
		})
	}
}
