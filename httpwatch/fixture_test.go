package httpwatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/stretchr/testify/require"
)

const fixtureDir = "testdata/kube-apiserver-1.37"

// fixture is one recorded response.
type fixture struct {
	Name        string
	Body        []byte
	Status      int     `json:"status"`
	ContentType string  `json:"content-type"`
	Chunked     *string `json:"transfer-encoding"`
	RetryAfter  string  `json:"retry-after"`
}

func (f fixture) isWatch() bool {
	return strings.HasSuffix(f.Name, ".jsonl") || strings.HasPrefix(f.Name, "watch-")
}

func loadFixture(t testing.TB, name string) fixture {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(fixtureDir, name))
	require.NoError(t, err)
	meta, err := os.ReadFile(filepath.Join(fixtureDir, name+".meta.json"))
	require.NoError(t, err)
	f := fixture{Name: name, Body: body}
	require.NoError(t, json.Unmarshal(meta, &f))
	return f
}

func fixtureNames(t testing.TB) []string {
	t.Helper()
	ents, err := os.ReadDir(fixtureDir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasSuffix(n, ".meta.json") || n == "README.md" {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// fakeAPI serves recorded responses and remembers the requests it saw.
type fakeAPI struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*http.Request
}

// serve starts a server answering every request with h, recording them.
func serve(t testing.TB, h http.HandlerFunc) *fakeAPI {
	t.Helper()
	f := &fakeAPI{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, r.Clone(r.Context()))
		f.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAPI) seen() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*http.Request(nil), f.requests...)
}

// writeFixture replays fx as the server sent it: status, content type,
// Retry-After, and for chunked responses one flush per line so that frames
// arrive as separate chunks.
func writeFixture(w http.ResponseWriter, fx fixture) {
	w.Header().Set("Content-Type", fx.ContentType)
	if fx.RetryAfter != "" {
		w.Header().Set("Retry-After", fx.RetryAfter)
	}
	if fx.Chunked == nil {
		w.Header().Set("Content-Length", fmt.Sprint(len(fx.Body)))
	}
	w.WriteHeader(fx.Status)
	if fx.Chunked == nil {
		w.Write(fx.Body)
		return
	}
	for _, line := range bytes.SplitAfter(fx.Body, []byte("\n")) {
		w.Write(line)
		w.(http.Flusher).Flush()
	}
}

func serveFixture(t testing.TB, name string) *fakeAPI {
	fx := loadFixture(t, name)
	return serve(t, func(w http.ResponseWriter, r *http.Request) { writeFixture(w, fx) })
}

// newTestClient returns a client for srv with fast retries and no rate
// limit.
func newTestClient(t testing.TB, url string) *Client {
	t.Helper()
	c, err := NewClient(&kubeconfig.Config{Host: url, QPS: -1, Timeout: 10 * time.Second})
	require.NoError(t, err)
	c.RetryWaitMin, c.RetryWaitMax = time.Millisecond, 5*time.Millisecond
	return c
}

var pods = Resource{Version: "v1", Resource: "pods", Namespace: "fixtures"}

// chunkReader returns its chunks one Read at a time, as a network would.
type chunkReader struct {
	chunks [][]byte
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for len(c.chunks) > 0 && len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	c.chunks[0] = c.chunks[0][n:]
	return n, nil
}

func (c *chunkReader) Close() error { return nil }

// splitAt cuts b into pieces at the given offsets (ascending).
func splitAt(b []byte, offsets ...int) [][]byte {
	var out [][]byte
	prev := 0
	for _, o := range offsets {
		out = append(out, b[prev:o])
		prev = o
	}
	return append(out, b[prev:])
}
