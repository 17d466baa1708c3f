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

// fanOut watches writes with w watchers on each server: a burst by 16
// writers, then a steady pace of one write every 1/rate s, as a node's
// pods change.
func (b *bench) fanOut(ctx context.Context, w, events int, rate float64, paced int) ([]row, error) {
	path := "/api/v1/namespaces/" + b.ns + "/pods"
	var rows []row
	for _, c := range []struct {
		what    string
		events  int
		writers int
		every   time.Duration
	}{
		{fmt.Sprintf("a burst of %d writes by 16 writers", events), events, 16, 0},
		{fmt.Sprintf("%d writes at a steady %.0f/s", paced, rate), paced, 1, time.Duration(float64(time.Second) / rate)},
	} {
		if c.events == 0 {
			continue
		}
		write := func(ctx context.Context, bu *burst) error { return b.writeBurst(ctx, bu, c.events, c.writers, c.every) }
		real, err := b.watchBurst(ctx, b.realHC, b.cfg.Host+path, w, c.events, write)
		if err != nil {
			return nil, fmt.Errorf("%s on kube-apiserver: %w", c.what, err)
		}
		served, err := b.watchBurst(ctx, b.servedHC, b.served+path, w, c.events, write)
		if err != nil {
			return nil, fmt.Errorf("%s on the served cache: %w", c.what, err)
		}
		realLat := real.latencies(func(rv string) (time.Time, bool) { t, ok := real.acked[rv]; return t, ok })
		servedE2E := served.latencies(func(rv string) (time.Time, bool) { t, ok := served.acked[rv]; return t, ok })
		servedHop := served.latencies(b.mirror.arrived)
		if c.every == 0 {
			rows = append(rows, row{fmt.Sprintf("watch fan-out: %d writes to %d watchers, events delivered per second", c.events, w), served.rate(), real.rate(),
				"≥ 100k/s (bound here by the upstream's write rate)"})
		}
		rows = append(rows,
			row{"event latency p50 / p99, " + c.what + ": the local hop (cache to watcher)", servedHop, "", "p99 ≤ 10 ms"},
			row{"event latency p50 / p99, " + c.what + ": write answered to watcher", servedE2E, realLat, ""})
	}
	return rows, nil
}

// watchBurst opens w watches of url from its current version, makes
// events writes with write, and waits until every watcher has seen every
// one.
func (b *bench) watchBurst(ctx context.Context, hc *http.Client, url string, w, events int, write func(context.Context, *burst) error) (*burst, error) {
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
	if err := write(ctx, bu); err != nil {
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

// writeBurst patches pods, writers at a time, one every every if it is
// not 0, recording when each new version was answered.
func (b *bench) writeBurst(ctx context.Context, bu *burst, events, writers int, every time.Duration) error {
	rc := b.real.Resource(podsIn(b.ns))
	n := make(chan int)
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for range writers {
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
	var tick <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	for i := range events {
		if tick != nil {
			<-tick // the pace of the writes, not a synchronisation
		}
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
