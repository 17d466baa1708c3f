package watchtest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/listwatch/listwatch/httpwatch/watchtest"
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
// reflector's initial list does. Per op: the whole list.
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
			var page struct {
				Metadata struct{ Continue string }
				Items    []json.RawMessage
			}
			err = json.NewDecoder(resp.Body).Decode(&page)
			resp.Body.Close()
			if err != nil {
				b.Fatal(err)
			}
			got += len(page.Items)
			if cont = page.Metadata.Continue; cont == "" {
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
		dec := json.NewDecoder(resp.Body)
		for got := 0; ; got++ {
			var e struct{ Type string }
			if err := dec.Decode(&e); err != nil {
				b.Fatal(err)
			}
			if e.Type == "BOOKMARK" {
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
