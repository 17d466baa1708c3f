package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"

	"github.com/listwatch/listwatch/httpwatch"
)

// fault is one kind of trouble, as the chaos suite (chaos/) injects it.
type fault struct {
	name, what string
	toxics     []toxic
	hold       time.Duration
	// held: only the connections the clients hold go silent; new ones
	// pass. The fault has no end; it is timed from its start.
	held bool
	// restart: the kube-apiserver is killed and started again.
	restart bool
	// fromStart: the table also gives the time from the fault's start.
	fromStart bool
}

type toxic struct {
	typ, stream string
	attrs       toxiproxy.Attributes
}

func faults(hold, hole time.Duration) []fault {
	blackHole := []toxic{{"timeout", "downstream", toxiproxy.Attributes{"timeout": 0}}, {"timeout", "upstream", toxiproxy.Attributes{"timeout": 0}}}
	return []fault{
		{name: "latency", what: "500 ms ± 250 ms", hold: hold, toxics: []toxic{{"latency", "downstream", toxiproxy.Attributes{"latency": 500, "jitter": 250}}}},
		{name: "bandwidth", what: "32 KB/s", hold: hold, toxics: []toxic{{"bandwidth", "downstream", toxiproxy.Attributes{"rate": 32}}}},
		{name: "slicer", what: "64 ± 32 B pieces, 0.5 ms apart", hold: hold, toxics: []toxic{{"slicer", "downstream", toxiproxy.Attributes{"average_size": 64, "size_variation": 32, "delay": 500}}}},
		{name: "limit_data", what: "every connection cut after 16 KB", hold: hold, toxics: []toxic{{"limit_data", "downstream", toxiproxy.Attributes{"bytes": 16 << 10}}}},
		{name: "reset_peer", what: "every connection reset", hold: hold, toxics: []toxic{{"reset_peer", "downstream", toxiproxy.Attributes{"timeout": 0}}, {"reset_peer", "upstream", toxiproxy.Attributes{"timeout": 0}}}},
		{name: "slow_close", what: "cut after 16 KB, closed 8 s later", hold: hold, toxics: []toxic{{"limit_data", "downstream", toxiproxy.Attributes{"bytes": 16 << 10}}, {"slow_close", "downstream", toxiproxy.Attributes{"delay": 8000}}}},
		{name: "black hole, whole path", what: fmt.Sprintf("timeout 0 both ways on every connection, %s; toxiproxy closes them when it ends", hole), hold: hole, toxics: blackHole, fromStart: true},
		{name: "outage, 60 s", what: "the whole path black-holed for 60 s (timeout 0 both ways on every connection); toxiproxy closes them when it ends", hold: 60 * time.Second, toxics: blackHole, fromStart: true},
		{name: "black hole, held connections", what: "timeout 0 both ways on the connections held; new ones pass", toxics: blackHole, held: true, fromStart: true},
		{name: "apiserver restart", what: "SIGKILL, started again; timed from ready", restart: true},
	}
}

// row is one fault's times, by observer: from the end, from the start
// (zero: not measured), and whether the client converged at all.
type row struct {
	f                fault
	took, fromStart  []time.Duration
	converged        []bool
	relists          []int64 // lists and watch-lists from the fault's start until the cache converged
	lasted           time.Duration
	changes, failing int
}

// measure runs f with the writer busy and times each observer.
func (l *lab) measure(ctx context.Context, f fault, limit time.Duration) (row, error) {
	w := &writer{cms: l.cms, ns: l.ns}
	listed := make([]int64, len(l.observers))
	for i, o := range l.observers {
		listed[i] = o.lists.n.Load()
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { w.run(stop) })
	start := time.Now()
	var err error
	switch {
	case f.restart:
		err = l.restartAPIServer(ctx)
	case f.held:
		err = l.addToxics(f.toxics, l.held)
		l.router.route(l.fresh.Listen)
		<-time.After(5 * time.Second) // changes after the silence began
	default:
		if err = l.addToxics(f.toxics, l.held, l.fresh); err == nil {
			<-time.After(f.hold)
			err = l.removeToxics(f.toxics, l.held, l.fresh)
		}
	}
	end := time.Now()
	close(stop)
	wg.Wait()
	if err != nil {
		return row{}, err
	}
	want, err := l.serverState(ctx)
	if err != nil {
		return row{}, err
	}
	r := row{f: f, lasted: end.Sub(start), changes: w.n, failing: w.failed}
	from := end
	if f.held {
		from = start
	}
	r.took, r.fromStart, r.converged = l.timeAll(want, from, limit)
	for i, o := range l.observers {
		r.relists = append(r.relists, o.lists.n.Load()-listed[i])
	}
	for i, d := range r.took {
		if f.fromStart && !f.held && r.converged[i] {
			r.fromStart[i] = d + end.Sub(start)
		}
	}
	if f.held { // end the silence: toxiproxy closes the connections it held
		l.router.route(l.held.Listen)
		err = l.removeToxics(f.toxics, l.held)
	}
	return r, err
}

// timeAll waits for every observer at once.
func (l *lab) timeAll(want map[string]string, from time.Time, limit time.Duration) (took, fromStart []time.Duration, ok []bool) {
	n := len(l.observers)
	took, fromStart, ok = make([]time.Duration, n), make([]time.Duration, n), make([]bool, n)
	var wg sync.WaitGroup
	for i, o := range l.observers {
		wg.Go(func() { took[i], ok[i] = o.waitEqual(want, from, limit-time.Since(from)) })
	}
	wg.Wait()
	return took, fromStart, ok
}

func (l *lab) addToxics(toxics []toxic, proxies ...*toxiproxy.Proxy) error {
	for _, p := range proxies {
		for i, x := range toxics {
			if _, err := p.AddToxic(fmt.Sprintf("%s-%s-%d", x.typ, x.stream, i), x.typ, x.stream, 1, x.attrs); err != nil {
				return fmt.Errorf("add toxic %s: %w", x.typ, err)
			}
		}
	}
	return nil
}

func (l *lab) removeToxics(toxics []toxic, proxies ...*toxiproxy.Proxy) error {
	for _, p := range proxies {
		for i, x := range toxics {
			if err := p.RemoveToxic(fmt.Sprintf("%s-%s-%d", x.typ, x.stream, i)); err != nil {
				return fmt.Errorf("remove toxic %s: %w", x.typ, err)
			}
		}
	}
	return nil
}

// writer changes configmaps on the direct path ten times a second: it
// patches them in turn, and every tenth change replaces one.
type writer struct {
	cms       *httpwatch.ResourceClient
	ns        string
	n, failed int
}

func (w *writer) run(stop <-chan struct{}) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			w.step()
		}
	}
}

func (w *writer) step() {
	w.n++
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	name := fmt.Sprintf("cm-%04d", (w.n*7919)%1000)
	var err error
	if w.n%10 == 0 {
		_ = w.cms.Delete(ctx, name)
		_, err = w.cms.Create(ctx, configMap(w.ns, name, strconv.Itoa(w.n)))
	} else {
		_, err = w.cms.Patch(ctx, name, httpwatch.MergePatch, fmt.Appendf(nil, `{"data":{"v":"%d"}}`, w.n))
	}
	if err != nil {
		w.failed++
	}
}

// restartAPIServer kills the kube-apiserver scripts/realapi.sh started and
// starts it again with its flags; it returns once the server is ready.
func (l *lab) restartAPIServer(ctx context.Context) error {
	dir := l.env["REALAPI_DIR"]
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return strings.TrimSpace(string(b))
	}
	pid, err := strconv.Atoi(read("kube-apiserver.pid"))
	if err != nil {
		return fmt.Errorf("kube-apiserver.pid: %w", err)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for syscall.Kill(pid, 0) == nil {
		time.Sleep(50 * time.Millisecond)
	}
	logf, err := os.OpenFile(filepath.Join(dir, "kube-apiserver.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(read("apiserver.bin"), strings.Split(read("apiserver.args"), "\n")...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "kube-apiserver.pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if _, err := l.cms.ListPage(ctx, httpwatch.ListOptions{Limit: 1}); err == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	log.Printf("kube-apiserver not ready after 2 min")
	return fmt.Errorf("kube-apiserver did not come back within 2 minutes")
}
