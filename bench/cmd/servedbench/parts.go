package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/reflector"
)

var (
	namespaces = httpwatch.Resource{Version: "v1", Resource: "namespaces"}
	podsIn     = func(ns string) httpwatch.Resource {
		return httpwatch.Resource{Version: "v1", Resource: "pods", Namespace: ns}
	}
)

func (b *bench) createNamespace(ctx context.Context) error {
	_, err := b.real.Resource(namespaces).Create(ctx, fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, b.ns))
	return err
}

func (b *bench) deleteNamespace() {
	_ = b.real.Resource(namespaces).Delete(context.Background(), b.ns)
}

// fillPods creates n pods, 16 at a time.
func (b *bench) fillPods(ctx context.Context, n int) error {
	rc := b.real.Resource(podsIn(b.ns))
	names := make(chan int)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range names {
				body := fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"pod-%05d","labels":{"app":"a%d"}},"spec":{"nodeName":"node-%d","containers":[{"name":"main","image":"registry.example/app:1.0","args":["--serve","--port=8080"],"env":[{"name":"MODE","value":"bench"}],"resources":{"requests":{"cpu":"10m","memory":"16Mi"}}}]}}`, i, i%7, i%10)
				if _, err := rc.Create(ctx, body); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range n {
		names <- i
	}
	close(names)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// jsonBytes is the size of the namespace's pods as JSON, each as
// kube-apiserver's list gives it.
func (b *bench) jsonBytes(ctx context.Context) (int64, int, error) {
	rc := b.real.Resource(podsIn(b.ns))
	rc.KeepManagedFields = true // as the served cache holds them
	p, err := rc.List(ctx, httpwatch.ListOptions{})
	if err != nil {
		return 0, 0, err
	}
	var n int64
	for _, o := range p.Items {
		n += int64(len(o.Raw()))
	}
	return n, len(p.Items), nil
}

func heapAfterGC() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// apiserverRSS is kube-apiserver's resident memory, read from /proc by
// the pid scripts/realapi.sh wrote; 0 if unknown.
func apiserverRSS() int64 {
	pid, err := os.ReadFile(filepath.Join(os.Getenv("REALAPI_DIR"), "kube-apiserver.pid"))
	if err != nil {
		return 0
	}
	status, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// memory is what holding the pods cost.
type memory struct {
	heap, jsonBytes, apiserverGrowth int64
	objects                          int
}

func (m *memory) rows() []row {
	return []row{
		{"memory: the served cache's heap (informer and cache)", fmt.Sprintf("%.1f MiB for %d pods, %.2f× their %.1f MiB of JSON", mib(m.heap), m.objects, float64(m.heap)/float64(m.jsonBytes), mib(m.jsonBytes)),
			fmt.Sprintf("resident memory grew %.1f MiB (%.2f× the JSON)", mib(m.apiserverGrowth), float64(m.apiserverGrowth)/float64(m.jsonBytes)), "≤ 1.1× the JSON + bounded history"},
	}
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// stampMirror is the served cache's Mirror with each event's arrival
// stamped, by resourceVersion.
type stampMirror struct {
	next reflector.Sink
	mu   sync.Mutex
	at   map[string]time.Time
}

func (s *stampMirror) stamp(o *raw.Object) {
	s.mu.Lock()
	s.at[o.ResourceVersion()] = time.Now()
	s.mu.Unlock()
}

func (s *stampMirror) arrived(rv string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.at[rv]
	return t, ok
}

func (s *stampMirror) Add(o *raw.Object) error    { s.stamp(o); return s.next.Add(o) }
func (s *stampMirror) Update(o *raw.Object) error { s.stamp(o); return s.next.Update(o) }
func (s *stampMirror) Delete(o *raw.Object) error { s.stamp(o); return s.next.Delete(o) }
func (s *stampMirror) Resync() error              { return s.next.Resync() }
func (s *stampMirror) Replace(items []*raw.Object, rv string) error {
	return s.next.Replace(items, rv)
}
func (s *stampMirror) Progress(rv string) {
	if p, ok := s.next.(reflector.Progresser); ok {
		p.Progress(rv)
	}
}

// row is one line of the table: what, on the served cache, on
// kube-apiserver, the goal.
type row struct{ what, served, real, goal string }

func printTable(w io.Writer, o options, rows []row) {
	fmt.Fprintf(w, "%d pods, %d informers, %d watchers, a burst of %d writes; %d CPUs, %s\n\n", o.pods, o.informers, o.watchers, o.events, runtime.NumCPU(), runtime.Version())
	fmt.Fprintln(w, "| measure | served cache | kube-apiserver | goal |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", r.what, r.served, r.real, r.goal)
	}
}

// get sends a GET and returns the answer's body, which the caller closes.
func get(ctx context.Context, hc *http.Client, url string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, b)
	}
	return resp.Body, nil
}

// decodeEvents reads watch events, one a line, from body until it ends,
// handing each one's version and arrival time to seen. It finds the
// version without decoding the object (the first resourceVersion of a
// pod's event is its metadata's), so that the watchers' own work weighs
// little on the server's in the same process.
func decodeEvents(body io.Reader, seen func(rv string, at time.Time)) {
	r := bufio.NewReaderSize(body, 64<<10)
	key := []byte(`"resourceVersion":"`)
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			head := slices.Clone(line) // the next read reuses the buffer line is in
			rest, err2 := r.ReadBytes('\n')
			line, err = append(head, rest...), err2
		}
		if err != nil {
			return
		}
		at := time.Now()
		if bytes.HasPrefix(line, []byte(`{"type":"BOOKMARK"`)) {
			continue
		}
		i := bytes.Index(line, key)
		if i < 0 {
			continue
		}
		v := line[i+len(key):]
		if j := bytes.IndexByte(v, '"'); j >= 0 {
			seen(string(v[:j]), at)
		}
	}
}
