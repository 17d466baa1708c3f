// Package measure is the part every benchmark client shares, so that the
// three informers are timed and weighed by the same code: it fetches the
// data set's description from the fake server, counts handler
// notifications, triggers the watch burst, and reads heap, RSS and CPU.
//
// A client program is a Start function handed to Main:
//
//	func main() {
//		measure.Main("my-informer", func(ctx context.Context, host string, c *measure.Counter) (measure.Synced, error) {
//			// build an informer for host/api/v1/pods whose single handler
//			// calls c.Add, c.Update and c.Delete; start it under ctx
//			return informer.HasSynced, nil
//		})
//	}
//
// Main prints one JSON Report on stdout. A program with flags of its own
// defines them on the default FlagSet and calls flag.Parse before Main.
package measure

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// Info is what the fake server says about its data set (GET /bench/info).
type Info struct {
	Pods                   int     `json:"pods"`
	Namespaces             int     `json:"namespaces"`
	Burst                  int     `json:"burst"`
	BytesPerObject         float64 `json:"bytes_per_object"`
	ManagedFieldsPerObject float64 `json:"managed_fields_bytes_per_object"`
	Requests               struct {
		Lists         int64 `json:"lists"`
		Watches       int64 `json:"watches"`
		InitialEvents int64 `json:"initial_events_watches"`
	} `json:"requests"`
}

// Report is one client's figures; run.sh collects them into the table.
type Report struct {
	Client string `json:"client"`
	Pods   int    `json:"pods"`
	Burst  int    `json:"burst"`

	BytesPerObject         float64 `json:"json_bytes_per_object"`
	ManagedFieldsPerObject float64 `json:"managed_fields_bytes_per_object"`

	// SyncSeconds runs from the informer's start to the handler having seen
	// an add for every pod (informers report HasSynced a little earlier,
	// before their handlers have caught up).
	SyncSeconds float64 `json:"sync_seconds"`
	// EventsSeconds runs from the burst's trigger to the handler having seen
	// an update for every event of it.
	EventsSeconds   float64 `json:"events_seconds"`
	EventsPerSecond float64 `json:"events_per_second"`

	// Heap figures are after runtime.GC, minus the same reading taken
	// before the client was built, divided by the number of pods.
	HeapBytesPerObject       float64 `json:"heap_bytes_per_object"`
	HeapInuseBytesPerObject  float64 `json:"heap_inuse_bytes_per_object"`
	HeapAfterEventsPerObject float64 `json:"heap_after_events_bytes_per_object"`

	PeakRSSBytes int64   `json:"peak_rss_bytes"`
	CPUSeconds   float64 `json:"cpu_seconds"`
	SyncCPU      float64 `json:"sync_cpu_seconds"`
	EventsCPU    float64 `json:"events_cpu_seconds"`

	// ServerRequests tells which requests the client made, to check that
	// every client did the same work (no watch-list, one list, one watch).
	ServerLists         int64 `json:"server_lists"`
	ServerWatches       int64 `json:"server_watches"`
	ServerInitialEvents int64 `json:"server_initial_events_watches"`

	GoVersion  string `json:"go_version"`
	GOMAXPROCS int    `json:"gomaxprocs"`
}

// Counter counts a handler's notifications and says when the expected
// numbers were reached.
type Counter struct {
	adds, updates, deletes atomic.Int64
	wantAdds, wantUpdates  int64
	addsDone, updatesDone  chan struct{}
}

// NewCounter returns a Counter waiting for adds adds and updates updates.
func NewCounter(adds, updates int) *Counter {
	c := &Counter{
		wantAdds: int64(adds), wantUpdates: int64(updates),
		addsDone: make(chan struct{}), updatesDone: make(chan struct{}),
	}
	if updates == 0 {
		close(c.updatesDone)
	}
	return c
}

// Add counts an add notification.
func (c *Counter) Add() {
	if c.adds.Add(1) == c.wantAdds {
		close(c.addsDone)
	}
}

// Update counts an update notification.
func (c *Counter) Update() {
	if c.updates.Add(1) == c.wantUpdates {
		close(c.updatesDone)
	}
}

// Delete counts a delete notification; the benchmark expects none.
func (c *Counter) Delete() { c.deletes.Add(1) }

// Synced reports whether an informer has synced.
type Synced func() bool

// Start builds an informer of the pods at host, with one handler feeding
// c, starts it under ctx and returns its HasSynced. What it returns stays
// reachable until the last heap reading.
type Start func(ctx context.Context, host string, c *Counter) (Synced, error)

// The flags every client program shares; Host and Timeout are exported for
// programs that measure without Main.
var (
	Host       = flag.String("host", "http://127.0.0.1:18080", "fake API server URL")
	Timeout    = flag.Duration("timeout", 10*time.Minute, "give up after this long")
	cpuProfile = flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	memProfile = flag.String("memprofile", "", "write a heap profile, taken once synced, to this file")
)

// Main runs the benchmark for one client and prints its Report. It exits
// non-zero, saying why, if anything fails or takes longer than -timeout.
func Main(client string, start Start) {
	if !flag.Parsed() {
		flag.Parse()
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: cpu profile: %v\n", client, err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	heapProfile = *memProfile
	ctx, cancel := context.WithTimeout(context.Background(), *Timeout)
	defer cancel()
	rep, err := run(ctx, client, *Host, start)
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintf(os.Stderr, "%s: %v\n", client, err)
		os.Exit(1)
	}
	out, _ := json.Marshal(rep)
	fmt.Println(string(out))
}

func run(ctx context.Context, client, host string, start Start) (*Report, error) {
	info, err := GetInfo(ctx, host)
	if err != nil {
		return nil, err
	}
	c := NewCounter(info.Pods, info.Burst)
	baseAlloc, baseInuse := Heap()

	began := time.Now()
	synced, err := start(ctx, host, c)
	if err != nil {
		return nil, fmt.Errorf("start informer: %w", err)
	}
	select {
	case <-c.addsDone:
	case <-ctx.Done():
		return nil, fmt.Errorf("initial sync: %d of %d adds: %w", c.adds.Load(), info.Pods, ctx.Err())
	}
	syncTime := time.Since(began)
	syncCPU := CPUSeconds()
	if !synced() {
		return nil, errors.New("handler saw every add before the informer reported synced")
	}

	alloc, inuse := Heap()
	if heapProfile != "" {
		if err := writeHeapProfile(heapProfile); err != nil {
			return nil, err
		}
	}

	triggered := time.Now()
	if err := Trigger(ctx, host); err != nil {
		return nil, err
	}
	select {
	case <-c.updatesDone:
	case <-ctx.Done():
		return nil, fmt.Errorf("burst: %d of %d updates: %w", c.updates.Load(), info.Burst, ctx.Err())
	}
	eventsTime := time.Since(triggered)
	eventsCPU := CPUSeconds() - syncCPU
	afterAlloc, _ := Heap()
	runtime.KeepAlive(synced) // the informer, through its method value

	if d := c.deletes.Load(); d != 0 {
		return nil, fmt.Errorf("handler saw %d deletes, expected none", d)
	}
	if a := c.adds.Load(); a != int64(info.Pods) {
		return nil, fmt.Errorf("handler saw %d adds, expected %d", a, info.Pods)
	}
	after, err := GetInfo(ctx, host)
	if err != nil {
		return nil, err
	}
	n := float64(info.Pods)
	return &Report{
		Client: client, Pods: info.Pods, Burst: info.Burst,
		BytesPerObject:           info.BytesPerObject,
		ManagedFieldsPerObject:   info.ManagedFieldsPerObject,
		SyncSeconds:              syncTime.Seconds(),
		EventsSeconds:            eventsTime.Seconds(),
		EventsPerSecond:          float64(info.Burst) / eventsTime.Seconds(),
		HeapBytesPerObject:       float64(int64(alloc)-int64(baseAlloc)) / n,
		HeapInuseBytesPerObject:  float64(int64(inuse)-int64(baseInuse)) / n,
		HeapAfterEventsPerObject: float64(int64(afterAlloc)-int64(baseAlloc)) / n,
		PeakRSSBytes:             PeakRSS(),
		CPUSeconds:               CPUSeconds(),
		SyncCPU:                  syncCPU,
		EventsCPU:                eventsCPU,
		ServerLists:              after.Requests.Lists - info.Requests.Lists,
		ServerWatches:            after.Requests.Watches - info.Requests.Watches,
		ServerInitialEvents:      after.Requests.InitialEvents - info.Requests.InitialEvents,
		GoVersion:                runtime.Version(),
		GOMAXPROCS:               runtime.GOMAXPROCS(0),
	}, nil
}

// heapProfile names the file for a heap profile of the synced cache.
var heapProfile string

func writeHeapProfile(name string) error {
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("heap profile: %w", err)
	}
	return f.Close()
}

// GetInfo asks the fake server about its data set.
func GetInfo(ctx context.Context, host string) (*Info, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, host+"/bench/info", nil)
	if err != nil {
		return nil, fmt.Errorf("get info: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get info: %w", err)
	}
	defer resp.Body.Close()
	var info Info
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		return nil, fmt.Errorf("get info: %w", err)
	}
	if info.Pods < 1 {
		return nil, errors.New("get info: the server has no pods")
	}
	return &info, nil
}

// Trigger asks the fake server to send the burst on the open watch.
func Trigger(ctx context.Context, host string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, host+"/bench/burst", nil)
	if err != nil {
		return fmt.Errorf("trigger burst: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("trigger burst: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("trigger burst: server answered %s", resp.Status)
	}
	return nil
}

// Heap collects garbage and returns the bytes of live heap objects and of
// in-use heap spans.
func Heap() (alloc, inuse uint64) {
	runtime.GC()
	runtime.GC() // a second cycle frees what finalizers of the first let go
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, m.HeapInuse
}

// PeakRSS returns the process's peak resident set size (VmHWM), or -1 if
// /proc does not say.
func PeakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmHWM:"))
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
		if err != nil {
			return -1
		}
		return kb << 10
	}
	return -1
}

// CPUSeconds returns the user plus system CPU time the process has used.
func CPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
