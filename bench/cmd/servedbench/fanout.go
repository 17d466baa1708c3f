package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
)

// burst is what the watchers of one server saw of a burst of writes.
type burst struct {
	mu      sync.Mutex
	acked   map[string]time.Time // version → when its write was answered
	arrived [][]arrival          // per watcher
	start   time.Time
}

type arrival struct {
	rv string
	at time.Time
}

// fanOut watches a burst of writes with w watchers on each server.
func (b *bench) fanOut(ctx context.Context, w, events int) ([]row, error) {
	path := "/api/v1/namespaces/" + b.ns + "/pods"
	real, err := b.watchBurst(ctx, b.realHC, b.cfg.Host+path, w, events)
	if err != nil {
		return nil, fmt.Errorf("on kube-apiserver: %w", err)
	}
	served, err := b.watchBurst(ctx, b.servedHC, b.served+path, w, events)
	if err != nil {
		return nil, fmt.Errorf("on the served cache: %w", err)
	}
	realLat := real.latencies(func(rv string) (time.Time, bool) { t, ok := real.acked[rv]; return t, ok })
	servedE2E := served.latencies(func(rv string) (time.Time, bool) { t, ok := served.acked[rv]; return t, ok })
	servedHop := served.latencies(b.mirror.arrived)
	return []row{
		{fmt.Sprintf("watch fan-out: %d writes to %d watchers, events delivered per second", events, w), served.rate(), real.rate(),
			"≥ 100k/s (bound here by the upstream's write rate)"},
		{"event latency p50 / p99: the local hop (cache to watcher)", servedHop, "", "p99 ≤ 10 ms"},
		{"event latency p50 / p99: write answered to watcher", servedE2E, realLat, ""},
	}, nil
}

// watchBurst opens w watches of url from its current version, makes
// events writes, and waits until every watcher has seen every one.
func (b *bench) watchBurst(ctx context.Context, hc *http.Client, url string, w, events int) (*burst, error) {
	rv, err := listVersion(ctx, hc, url)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	bu := &burst{acked: map[string]time.Time{}, arrived: make([][]arrival, w)}
	var wg sync.WaitGroup
	done := make(chan struct{}, w)
	for i := range w {
		body, err := get(ctx, hc, url+"?watch=1&resourceVersion="+rv)
		if err != nil {
			return nil, err
		}
		wg.Go(func() {
			defer body.Close()
			decodeEvents(body, func(rv string, at time.Time) {
				bu.arrived[i] = append(bu.arrived[i], arrival{rv, at})
				if len(bu.arrived[i]) == events {
					done <- struct{}{}
				}
			})
		})
	}
	bu.start = time.Now()
	if err := b.writeBurst(ctx, bu, events); err != nil {
		return nil, err
	}
	for range w {
		select {
		case <-done:
		case <-ctx.Done():
			return nil, fmt.Errorf("the watchers did not all see %d events within 3 minutes", events)
		}
	}
	cancel()
	wg.Wait()
	return bu, nil
}

// writeBurst patches pods, 16 at a time, recording when each new version
// was answered.
func (b *bench) writeBurst(ctx context.Context, bu *burst, events int) error {
	rc := b.real.Resource(podsIn(b.ns))
	n := make(chan int)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range n {
				o, err := rc.Patch(ctx, fmt.Sprintf("pod-%05d", i), httpwatch.MergePatch, fmt.Appendf(nil, `{"metadata":{"labels":{"burst":"%d"}}}`, time.Now().UnixNano()))
				if err != nil {
					select {
					case errs <- err:
					default:
					}
					continue
				}
				bu.mu.Lock()
				bu.acked[o.ResourceVersion()] = time.Now()
				bu.mu.Unlock()
			}
		})
	}
	for i := range events {
		n <- i % min(1000, b.pods)
	}
	close(n)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// rate is the events delivered to all watchers per second, from the
// first write to the last arrival.
func (bu *burst) rate() string {
	var last time.Time
	total := 0
	for _, as := range bu.arrived {
		total += len(as)
		if t := as[len(as)-1].at; t.After(last) {
			last = t
		}
	}
	d := last.Sub(bu.start)
	return fmt.Sprintf("%.0f/s (%d events in %s)", float64(total)/d.Seconds(), total, d.Round(time.Millisecond))
}

// latencies is p50 / p99 of every arrival after its version's time from.
func (bu *burst) latencies(from func(rv string) (time.Time, bool)) string {
	var ds []time.Duration
	for _, as := range bu.arrived {
		for _, a := range as {
			if t, ok := from(a.rv); ok {
				ds = append(ds, a.at.Sub(t))
			}
		}
	}
	if len(ds) == 0 {
		return "none measured"
	}
	slices.Sort(ds)
	return fmt.Sprintf("%s / %s (%d events)", ms(ds[len(ds)/2]), ms(ds[len(ds)*99/100]), len(ds))
}
