package watchtest_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/watchtest"
)

var padding = strings.Repeat("x", 3800)

// bigPod returns a pod of about 4 KB, the size of a typical real one.
func bigPod(i int) string {
	return fmt.Sprintf(`{"metadata":{"name":"pod-%06d","namespace":"bench","labels":{"app":"web","shard":"%d"},"annotations":{"note":"%s"}},"spec":{"containers":[{"name":"app","image":"nginx:1.27"}]},"status":{"phase":"Running"}}`,
		i, i%16, padding)
}

func BenchmarkCreate(b *testing.B) {
	s := watchtest.NewServer()
	defer s.Close()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := s.Create(watchtest.Pods, bigPod(i)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func seeded(b *testing.B, n int) *watchtest.Server {
	b.Helper()
	s := watchtest.NewServer()
	for i := range n {
		if _, err := s.Create(watchtest.Pods, bigPod(i)); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkListPaged reads 10,000 pods of 4 KB in pages of 500, as a
// reflector's initial list does. Per op: the whole list. The client only
// finds the continue token, so the figure is mostly the server's.
func BenchmarkListPaged(b *testing.B) {
	const n = 10_000
	s := seeded(b, n)
	defer s.Close()
	b.ReportAllocs()
	b.SetBytes(n * 4096)
	for b.Loop() {
		got := 0
		cont := ""
		for {
			q := url.Values{"limit": {"500"}}
			if cont != "" {
				q.Set("continue", cont)
			}
			resp, err := s.Client().Get(s.URL + "/api/v1/namespaces/bench/pods?" + q.Encode())
			if err != nil {
				b.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				b.Fatal(err)
			}
			got += int(gjson.GetBytes(body, "items.#").Int())
			if cont = gjson.GetBytes(body, "metadata.continue").String(); cont == "" {
				break
			}
		}
		if got != n {
			b.Fatalf("listed %d pods, want %d", got, n)
		}
	}
}

// BenchmarkWatchListInitial streams 10,000 pods of 4 KB as a watch-list up
// to the initial-events-end bookmark.
func BenchmarkWatchListInitial(b *testing.B) {
	const n = 10_000
	s := seeded(b, n)
	defer s.Close()
	b.ReportAllocs()
	b.SetBytes(n * 4096)
	for b.Loop() {
		resp, err := s.Client().Get(s.URL + "/api/v1/namespaces/bench/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
		if err != nil {
			b.Fatal(err)
		}
		// Frames are one per line here; a real client must not rely on it.
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for got := 0; ; got++ {
			if !sc.Scan() {
				b.Fatalf("stream ended after %d events: %v", got, sc.Err())
			}
			if bytes.HasPrefix(sc.Bytes(), []byte(`{"type":"BOOKMARK"`)) {
				if got != n {
					b.Fatalf("got %d events before the bookmark, want %d", got, n)
				}
				break
			}
		}
		resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
	}
}

// BenchmarkMergePatch is a controller's write: a merge patch of one label
// on a 4 KB pod, over HTTP, answered with the stored object. Per op: one
// round trip and one new resourceVersion.
func BenchmarkMergePatch(b *testing.B) {
	s := seeded(b, 1)
	defer s.Close()
	path := s.URL + "/api/v1/namespaces/bench/pods/pod-000000"
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		req, err := http.NewRequest(http.MethodPatch, path, strings.NewReader(fmt.Sprintf(`{"metadata":{"labels":{"gen":"%d"}}}`, i)))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/merge-patch+json")
		resp, err := s.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("patch: HTTP %d", resp.StatusCode)
		}
		i++
	}
}

// BenchmarkNewServer measures a server's start, the cost every test pays:
// listening, the default resources, and a first discovery read, which a
// client makes to explain a 404 (decision 24). It should stay under 10 ms.
func BenchmarkNewServer(b *testing.B) {
	for b.Loop() {
		s := watchtest.NewServer()
		resp, err := s.Client().Get(s.URL + "/api")
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		s.Close()
	}
}
