package watchtest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
	"go.uber.org/goleak"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/listwatch/listwatch/watchtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// bound is how long a test waits for something that should happen at once;
// reaching it means the behaviour is broken, not slow.
const bound = 10 * time.Second

func newServer(t *testing.T) *watchtest.Server {
	t.Helper()
	s := watchtest.NewServer()
	t.Cleanup(s.Close)
	return s
}

func podJSON(ns, name string, labels map[string]string) string {
	obj := map[string]any{
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": labels},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx"}}},
	}
	b, _ := json.Marshal(obj)
	return string(b)
}

// podsPath is the URL path of pods in namespace ns ("" for all), or of
// the pod name.
func podsPath(ns, name string) string {
	p := "/api/v1/pods"
	if ns != "" {
		p = "/api/v1/namespaces/" + ns + "/pods"
	}
	if name != "" {
		p += "/" + name
	}
	return p
}

func mustCreate(t *testing.T, s *watchtest.Server, r httpwatch.Resource, obj any) gjson.Result {
	t.Helper()
	o, err := s.Create(r, obj)
	require.NoError(t, err)
	return gjson.ParseBytes(o.Raw())
}

func rvOf(o gjson.Result) string { return o.Get("metadata.resourceVersion").String() }

// do sends a request and returns the status and body.
func do(t *testing.T, s *watchtest.Server, method, path, body string) (int, []byte, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	require.NoError(t, err)
	resp, err := s.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b, resp.Header
}

func get(t *testing.T, s *watchtest.Server, path string) (int, []byte) {
	t.Helper()
	code, b, _ := do(t, s, http.MethodGet, path, "")
	return code, b
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	return fixtures.Load(t, name).Body
}

// keysOf returns the keys of a JSON object in the order written.
func keysOf(t *testing.T, raw []byte) []string {
	t.Helper()
	var keys []string
	gjson.ParseBytes(raw).ForEach(func(k, _ gjson.Result) bool {
		keys = append(keys, k.String())
		return true
	})
	require.NotEmpty(t, keys, "not a JSON object: %s", raw)
	return keys
}

func sortedKeys(t *testing.T, raw []byte) []string {
	k := keysOf(t, raw)
	slices.Sort(k)
	return k
}

// event is one decoded watch frame.
type event struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

func (e event) get(path string) string { return gjson.GetBytes(e.Object, path).String() }

func (e event) String() string {
	return e.Type + " " + e.get("metadata.name") + " " + e.get("metadata.resourceVersion")
}

// watch is an open watch stream read by a goroutine, so a test can wait
// for the next event with a bound.
type watch struct {
	t      *testing.T
	resp   *http.Response
	events chan event
	err    error // set before events closes
}

func openWatch(t *testing.T, s *watchtest.Server, path string) *watch {
	t.Helper()
	resp, err := s.Client().Get(s.URL + path)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "watch %s", path)
	w := &watch{t: t, resp: resp, events: make(chan event, 10000)}
	go func() {
		defer close(w.events)
		dec := json.NewDecoder(resp.Body)
		for {
			var e event
			if err := dec.Decode(&e); err != nil {
				w.err = err
				return
			}
			w.events <- e
		}
	}()
	t.Cleanup(w.stop)
	return w
}

func (w *watch) stop() {
	w.resp.Body.Close()
	for range w.events { //nolint:revive // drain until the reader goroutine is done
	}
}

// next returns the next event, failing the test if the stream ends or
// nothing comes within the bound.
func (w *watch) next() event {
	w.t.Helper()
	select {
	case e, ok := <-w.events:
		if !ok {
			w.t.Fatalf("watch ended: %v", w.err)
		}
		return e
	case <-time.After(bound):
		w.t.Fatal("no watch event within the bound")
	}
	return event{}
}

// nextN returns the next n events.
func (w *watch) nextN(n int) []event {
	w.t.Helper()
	out := make([]event, n)
	for i := range out {
		out[i] = w.next()
	}
	return out
}

// end waits for the stream to end and returns how it ended: nil for a
// clean end of body.
func (w *watch) end() error {
	w.t.Helper()
	for {
		select {
		case e, ok := <-w.events:
			if !ok {
				if errors.Is(w.err, io.EOF) {
					return nil
				}
				return w.err
			}
			w.t.Fatalf("unexpected event %v before the end", e)
		case <-time.After(bound):
			w.t.Fatal("watch did not end within the bound")
		}
	}
}

func names(items []gjson.Result) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Get("metadata.name").String()
	}
	return out
}

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, json.Compact(&buf, b))
	return buf.String()
}
