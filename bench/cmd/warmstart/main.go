// Command warmstart measures listwatch's warm start against a
// cold start on the benchmark's fakeapi: an informer of every pod syncs by
// a paged list and stops, saving its snapshot; a second one, in a new
// process as an agent's restart is, starts from it. It prints one JSON
// line: for each start the time to first-ready (cold: synced; warm: the
// snapshot in the cache, its adds handed to the handler), the time to
// synced, the CPU time to synced, and the bytes the server sent; the
// snapshot's size and the time the stop took to write it.
//
// fakeapi holds each watch's burst until triggered and, as kube-apiserver
// does, sends no bookmark on a quiet resumed watch, so the warm start is
// confirmed by ConfirmAfter (snapshot.DefaultConfirmAfter, 100 ms;
// -confirm-after sets it): synced-ms includes that wait, first-ready is
// what an agent can read at once.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"runtime/pprof"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/snapshot"
)

// start is one start of an informer.
type start struct {
	FirstReadyMS float64 `json:"first_ready_ms"`
	SyncedMS     float64 `json:"synced_ms"`
	// CPUMS is the process's user + system CPU time from the start to
	// synced: on a shared machine a steadier measure than the wall clock.
	CPUMS       float64 `json:"cpu_ms"`
	ServedBytes int64   `json:"served_bytes"`
	Objects     int     `json:"objects"`
}

type report struct {
	Client        string  `json:"client"`
	Cold          start   `json:"cold"`
	Warm          start   `json:"warm"`
	SnapshotBytes int64   `json:"snapshot_bytes"`
	StopMS        float64 `json:"stop_and_save_ms"`
}

func main() {
	host := flag.String("host", "http://127.0.0.1:18080", "fakeapi's URL")
	confirm := flag.Duration("confirm-after", 0, "Snapshot.ConfirmAfter (0: the default)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the warm start to this file")
	table := flag.Bool("table", false, "print a Markdown table of the JSON lines in the files named, medians per file, instead of measuring")
	warmDir := flag.String("warm-dir", "", "internal: be the restarted process, starting from the snapshot in this directory")
	flag.Parse()
	if *table {
		if err := printTable(os.Stdout, flag.Args()); err != nil {
			fmt.Fprintln(os.Stderr, "warmstart:", err)
			os.Exit(1)
		}
		return
	}
	if *warmDir != "" {
		if err := warmStart(*host, snapshot.Options{Dir: *warmDir, ConfirmAfter: *confirm}, *profile); err != nil {
			fmt.Fprintln(os.Stderr, "warmstart: warm:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*host, *confirm, *profile); err != nil {
		fmt.Fprintln(os.Stderr, "warmstart:", err)
		os.Exit(1)
	}
}

func run(host string, confirm time.Duration, profile string) error {
	dir, err := os.MkdirTemp("", "warmstart")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var served atomic.Int64
	client, err := newClient(host, &served)
	if err != nil {
		return err
	}
	rep := report{Client: "listwatch warm start"}
	opts := snapshot.Options{Dir: dir, ConfirmAfter: confirm}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	inf, stop := informer(client, opts)
	if rep.Cold, err = timeStart(ctx, inf, &served, nil); err != nil {
		return fmt.Errorf("cold: %w", err)
	}
	t0 := time.Now()
	stop()
	rep.StopMS = ms(time.Since(t0))
	if st, err := os.Stat(opts.Path(snapshot.Key{Resource: "pods.v1"})); err == nil {
		rep.SnapshotBytes = st.Size()
	}

	// The restart is a new process, as an agent's is: no heap, no
	// connections, nothing cached but the file.
	cmd := exec.CommandContext(ctx, os.Args[0], "-host", host, "-confirm-after", confirm.String(), "-cpuprofile", profile, "-warm-dir", dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("warm: %w", err)
	}
	if err := json.Unmarshal(out, &rep.Warm); err != nil {
		return fmt.Errorf("warm: %w", err)
	}
	return json.NewEncoder(os.Stdout).Encode(rep)
}

// warmStart is the restarted process: it starts from the snapshot in
// opts.Dir and prints its start's figures.
func warmStart(host string, opts snapshot.Options, profile string) error {
	var served atomic.Int64
	client, err := newClient(host, &served)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	inf, stop := informer(client, opts)
	defer stop()
	s, err := timeStart(ctx, inf, &served, restored)
	pprof.StopCPUProfile()
	if err != nil {
		return err
	}
	if inf.Stats().Lists != 0 {
		return fmt.Errorf("the warm start listed")
	}
	return json.NewEncoder(os.Stdout).Encode(s)
}

func newClient(host string, served *atomic.Int64) (*httpwatch.Client, error) {
	return httpwatch.NewClient(&kubeconfig.Config{Host: host, QPS: -1,
		WrapTransport: func(rt http.RoundTripper) http.RoundTripper { return counting{rt, served} }})
}

// informer starts an informer of all pods with one counting handler.
func informer(client *httpwatch.Client, opts snapshot.Options) (*listwatch.Informer, func()) {
	inf := listwatch.NewInformer(client.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"}), 0)
	inf.Reflector.PagedList = true // as every client of the benchmark
	inf.Snapshot = opts
	inf.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	_, _ = inf.AddEventHandler(listwatch.HandlerFuncs{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	return inf, func() { cancel(); <-done }
}

// restored says the cache holds the snapshot (or synced without one).
func restored(inf *listwatch.Informer) bool {
	return inf.Stats().Snapshot.Restored > 0 || inf.HasSynced()
}

// timeStart times one start from now: to readable (ready, polled every
// millisecond; nil: when synced), then to synced.
func timeStart(ctx context.Context, inf *listwatch.Informer, served *atomic.Int64, ready func(*listwatch.Informer) bool) (start, error) {
	served.Store(0)
	t0, cpu0 := time.Now(), cpuSeconds()
	var s start
	if ready != nil {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for !ready(inf) {
			select {
			case <-tick.C:
			case <-ctx.Done():
				return s, ctx.Err()
			}
		}
		s.FirstReadyMS = ms(time.Since(t0))
	}
	if err := inf.Wait(ctx); err != nil {
		return s, err
	}
	s.SyncedMS = ms(time.Since(t0))
	if ready == nil {
		s.FirstReadyMS = s.SyncedMS
	}
	s.CPUMS = 1000 * (cpuSeconds() - cpu0)
	s.ServedBytes = served.Load()
	s.Objects = inf.Stats().Objects
	return s, nil
}

// cpuSeconds is the user plus system CPU time the process has used.
// (Package measure has one too, but registers flags of its own.)
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// counting counts the bytes of every response body.
type counting struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (c counting) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err == nil {
		resp.Body = body{resp.Body, c.n}
	}
	return resp, err
}

type body struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}
