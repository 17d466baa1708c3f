// Package watchers opens many plain HTTP watches of one URL at once, for
// the benchmarks of a server's fan-out and latency: each watcher reads
// the response line by line, one watch event a line, on its own
// goroutine.
//
//	ws := watchers.Start(b, srv.URL+"/api/v1/pods?watch=1", 100, b.N, nil)
//	b.ResetTimer()
//	... make b.N events ...
//	ws.Wait()
package watchers

import (
	"bufio"
	"context"
	"net/http"
	"sync"
	"testing"
)

// Set is the watchers Start opened.
type Set struct {
	tb     testing.TB
	total  int
	counts []int
	done   sync.WaitGroup
}

// Start opens n watches of url and returns once each has its response
// headers. Each watcher reads until it has read total lines, calling
// read, if not nil, with its number and each line (valid only during the
// call) from its own goroutine. The watches end at tb's cleanup.
func Start(tb testing.TB, url string, n, total int, read func(w int, line []byte)) *Set {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &Set{tb: tb, total: total, counts: make([]int, n)}
	var ready sync.WaitGroup
	for w := range n {
		ready.Add(1)
		s.done.Add(1)
		go func() {
			defer s.done.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			resp, err := http.DefaultClient.Do(req)
			ready.Done()
			if err != nil {
				return
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(nil, 1<<20)
			for s.counts[w] < total && sc.Scan() {
				s.counts[w]++
				if read != nil {
					read(w, sc.Bytes())
				}
			}
		}()
	}
	ready.Wait()
	tb.Cleanup(func() {
		cancel()
		s.done.Wait()
	})
	return s
}

// Wait waits until every watcher has read its lines or lost its watch,
// and fails tb naming a watcher that read fewer than it should.
func (s *Set) Wait() {
	s.tb.Helper()
	s.done.Wait()
	for w, n := range s.counts {
		if n != s.total {
			s.tb.Fatalf("watcher %d read %d events, want %d", w, n, s.total)
		}
	}
}
