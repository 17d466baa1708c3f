// Command report turns the JSON lines the benchmark clients print into
// bench/RESULTS.md and the ratio chart bench/ratios.svg. run.sh calls it;
// every ratio it prints compares figures measured in the same run.
//
//	report -machine "2 × AMD EPYC" -sizes sizes.tsv -workqueue wq.txt \
//	    -md RESULTS.md -svg ratios.svg n10000.jsonl n50000.jsonl
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/listwatch/listwatch/bench/internal/measure"
)

// The clients' names as they report them, in table order.
const (
	dynamic = "client-go dynamic"
	typed   = "client-go typed"
	lwKeep  = "listwatch (managedFields kept)"
	lwDrop  = "listwatch (default: managedFields dropped)"
	lwProj  = "listwatch (projected: labels, owners, node, phase)"
	limit   = "limit (read + JSON scan)"
	floor   = "limit (read only)"
)

var clients = []string{dynamic, typed, lwKeep, lwDrop, lwProj, limit, floor}

// binaryOf names the minimal program whose size stands for each client.
var binaryOf = map[string]string{dynamic: "clientgo-dynamic", typed: "clientgo-typed", lwKeep: "listwatch", lwDrop: "listwatch", lwProj: "listwatch"}

// figure is one column of the comparison.
type figure struct {
	name   string
	unit   string
	higher bool    // higher is better
	target float64 // listwatch ÷ client-go dynamic must be at most this (at least, if higher)
	get    func(r *result) float64
	format func(float64) string
}

// result is one client's figures at one size: medians over the repetitions.
type result struct {
	measure.Report
	binary float64
	reps   int
}

var figures = []figure{
	{"initial sync", "s", false, 0.25, func(r *result) float64 { return r.SyncSeconds }, func(v float64) string { return fmt.Sprintf("%.3f s", v) }},
	{"watch events/s", "", true, 4, func(r *result) float64 { return r.EventsPerSecond }, func(v float64) string { return fmt.Sprintf("%.0f", v) }},
	{"heap / object", "B", false, 0.2, func(r *result) float64 { return r.HeapBytesPerObject }, func(v float64) string { return fmt.Sprintf("%.0f B", v) }},
	{"peak RSS", "MB", false, 0.25, func(r *result) float64 { return float64(r.PeakRSSBytes) }, mb},
	{"CPU", "s", false, 0.35, func(r *result) float64 { return r.CPUSeconds }, func(v float64) string { return fmt.Sprintf("%.2f s", v) }},
	{"stripped binary", "MB", false, 0.3, func(r *result) float64 { return r.binary }, mb},
}

func mb(v float64) string { return fmt.Sprintf("%.1f MB", v/1e6) }

func main() {
	machine := flag.String("machine", "", "description of the machine")
	sizesFile := flag.String("sizes", "", "file of 'program bytes' lines: the stripped minimal binaries")
	workqueue := flag.String("workqueue", "", "go test -bench output of the workqueue benchmarks")
	mdOut := flag.String("md", "RESULTS.md", "markdown report to write")
	svgOut := flag.String("svg", "ratios.svg", "chart to write")
	scale := flag.String("scale", "", "comma-separated result files of listwatch and the floor alone, at larger sizes (the scaling table)")
	flag.Parse()
	var scaleFiles []string
	if *scale != "" {
		scaleFiles = strings.Split(*scale, ",")
	}
	if err := run(*machine, *sizesFile, *workqueue, *mdOut, *svgOut, flag.Args(), scaleFiles...); err != nil {
		fmt.Fprintf(os.Stderr, "report: %v\n", err)
		os.Exit(1)
	}
}

// size is all results at one number of pods.
type size struct {
	pods  int
	burst int
	json  float64
	// managedFields is the part of json that is metadata.managedFields.
	managedFields float64
	results       map[string]*result
}

func run(machine, sizesFile, wqFile, mdOut, svgOut string, files []string, scaleFiles ...string) error {
	if len(files) == 0 {
		return fmt.Errorf("no result files given")
	}
	binaries, err := readSizes(sizesFile)
	if err != nil {
		return err
	}
	var sizes []*size
	for _, f := range files {
		s, err := readResults(f, binaries)
		if err != nil {
			return err
		}
		sizes = append(sizes, s)
	}
	slices.SortFunc(sizes, func(a, b *size) int { return a.pods - b.pods })
	all := slices.Clone(sizes)
	for _, f := range scaleFiles {
		s, err := readResults(f, binaries)
		if err != nil {
			return err
		}
		all = append(all, s)
	}
	slices.SortFunc(all, func(a, b *size) int { return a.pods - b.pods })
	var wq []byte
	if wqFile != "" {
		if wq, err = os.ReadFile(wqFile); err != nil {
			return fmt.Errorf("read workqueue results: %w", err)
		}
	}
	md := append(markdown(machine, sizes), floorSection(all)...)
	if len(wq) > 0 {
		var b bytes.Buffer
		workqueueSection(&b, wq)
		md = append(md, b.Bytes()...)
	}
	if err := os.WriteFile(mdOut, md, 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err := os.WriteFile(svgOut, chart(sizes[len(sizes)-1]), 0o644); err != nil {
		return fmt.Errorf("write chart: %w", err)
	}
	os.Stdout.Write(md)
	return nil
}

func readSizes(name string) (map[string]float64, error) {
	out := map[string]float64{}
	if name == "" {
		return out, nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read binary sizes: %w", err)
	}
	for line := range strings.Lines(string(b)) {
		prog, n, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		if err != nil {
			return nil, fmt.Errorf("read binary sizes: %q: %w", line, err)
		}
		out[prog] = v
	}
	return out, nil
}

// readResults reads one size's reports and keeps, per client and figure,
// the median over repetitions.
func readResults(name string, binaries map[string]float64) (*size, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	defer f.Close()
	byClient := map[string][]measure.Report{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var r measure.Report
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("read results %s: %w", name, err)
		}
		byClient[r.Client] = append(byClient[r.Client], r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read results %s: %w", name, err)
	}
	s := &size{results: map[string]*result{}}
	for client, reps := range byClient {
		r := &result{Report: reps[0], reps: len(reps), binary: binaries[binaryOf[client]]}
		med := func(get func(*measure.Report) float64) float64 {
			vs := make([]float64, len(reps))
			for i := range reps {
				vs[i] = get(&reps[i])
			}
			slices.Sort(vs)
			if len(vs)%2 == 1 {
				return vs[len(vs)/2]
			}
			return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
		}
		r.SyncSeconds = med(func(r *measure.Report) float64 { return r.SyncSeconds })
		r.EventsPerSecond = med(func(r *measure.Report) float64 { return r.EventsPerSecond })
		r.HeapBytesPerObject = med(func(r *measure.Report) float64 { return r.HeapBytesPerObject })
		r.HeapAfterEventsPerObject = med(func(r *measure.Report) float64 { return r.HeapAfterEventsPerObject })
		r.PeakRSSBytes = int64(med(func(r *measure.Report) float64 { return float64(r.PeakRSSBytes) }))
		r.CPUSeconds = med(func(r *measure.Report) float64 { return r.CPUSeconds })
		s.results[client] = r
		s.pods, s.burst, s.json, s.managedFields = r.Pods, r.Burst, r.BytesPerObject, r.ManagedFieldsPerObject
	}
	return s, nil
}

func ratio(f figure, lw, ref *result) float64 {
	a, b := f.get(lw), f.get(ref)
	if a <= 0 || b <= 0 {
		return math.NaN()
	}
	return a / b
}

func met(f figure, r float64) string {
	switch {
	case math.IsNaN(r):
		return "—"
	case f.higher && r >= f.target, !f.higher && r <= f.target:
		return "yes"
	}
	return "**no**"
}

func fmtRatio(r float64) string {
	if math.IsNaN(r) {
		return "—"
	}
	return fmt.Sprintf("%.2f×", r)
}

func markdown(machine string, sizes []*size) []byte {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# listwatch vs client-go: benchmark results\n\n")
	p("Generated by `bench/run.sh` on %s.\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	p("Machine: %s.\n\n", machine)
	last := sizes[len(sizes)-1]
	p("Data set: pods of %.0f bytes of JSON on average (of which %.0f are the two managedFields entries), ", last.json, last.managedFields)
	p("served by `cmd/fakeapi` from pre-rendered bytes: a paged LIST (limit 500), then a WATCH that sends a burst of MODIFIED events ")
	p("(as many as there are pods) when the client asks for it. Each client is its own process and does the same work: ")
	p("sync the informer with one counting handler, then take in the burst. Figures are medians over the repetitions; ")
	p("ratios compare figures of the same run. WatchList is off in every client (client-go: `KUBE_FEATURE_WatchListClient=false`).\n\n")
	p("How each figure is taken (`internal/measure`): *initial sync* from starting the informer to the handler having seen every add; ")
	p("*events/s* is the burst size over the time from triggering it to the handler having seen every update; ")
	p("*heap / object* is HeapAlloc after `runtime.GC` once synced, minus the same reading before the client was built, over the number of pods; ")
	p("*peak RSS* is VmHWM; *CPU* is user + system time of the whole process (getrusage); ")
	p("*stripped binary* is the size of the minimal program in `cmd/minimal` built with `-ldflags='-s -w' -trimpath`.\n\n")
	p("Where listwatch's time and memory go, from pprof: [PROFILE.md](PROFILE.md). The chart: [ratios.svg](ratios.svg).\n\n")

	for _, s := range sizes {
		p("## %d pods, burst of %d events\n\n", s.pods, s.burst)
		p("| client | reps |")
		for _, f := range figures {
			p(" %s |", f.name)
		}
		p(" heap ÷ JSON | list pages, watches |\n|---|---|")
		for range figures {
			p("---:|")
		}
		p("---:|---:|\n")
		for _, c := range clients {
			r, ok := s.results[c]
			if !ok {
				continue
			}
			p("| %s | %d |", c, r.reps)
			for _, f := range figures {
				v := f.get(r)
				if v <= 0 {
					p(" — |")
				} else {
					p(" %s |", f.format(v))
				}
			}
			if r.HeapBytesPerObject > 0 {
				p(" %.2f | %d, %d |\n", r.HeapBytesPerObject/s.json, r.ServerLists, r.ServerWatches)
			} else {
				p(" — | — |\n")
			}
		}
		p("\n")
		projectedTable(&b, s)
		dyn, typ := s.results[dynamic], s.results[typed]
		if dyn == nil || typ == nil {
			continue
		}
		p("| figure | target vs dynamic | kept ÷ dynamic | met | default ÷ dynamic | met | kept ÷ typed | beats typed | default ÷ typed | beats typed |\n")
		p("|---|---:|---:|---|---:|---|---:|---|---:|---|\n")
		for _, f := range figures {
			cmp := "≤"
			if f.higher {
				cmp = "≥"
			}
			p("| %s | %s %.2f× |", f.name, cmp, f.target)
			for _, lwName := range []string{lwKeep, lwDrop} {
				if lw := s.results[lwName]; lw != nil {
					r := ratio(f, lw, dyn)
					p(" %s | %s |", fmtRatio(r), met(f, r))
				} else {
					p(" — | — |")
				}
			}
			for _, lwName := range []string{lwKeep, lwDrop} {
				if lw := s.results[lwName]; lw != nil {
					r := ratio(f, lw, typ)
					p(" %s | %s |", fmtRatio(r), met(figure{higher: f.higher, target: 1}, r))
				} else {
					p(" — | — |")
				}
			}
			p("\n")
		}
		p("\n")
		lim, flo := s.results[limit], s.results[floor]
		if lim != nil && flo != nil {
			p("Distance from this machine's limit (`cmd/limit`, keeping nothing): reading the same list pages and burst over HTTP and ")
			p("scanning every byte once with `json.Valid` syncs in %.3f s and takes in %.0f events/s; ", lim.SyncSeconds, lim.EventsPerSecond)
			p("only reading them syncs in %.3f s and takes in %.0f events/s. ", flo.SyncSeconds, flo.EventsPerSecond)
			p("A client can beat the first (its scanner need not be encoding/json's) but not the second. ")
			p("The least heap a cache of raw JSON can hold is the JSON itself: heap ÷ JSON 1.00.\n\n")
			p("| client | sync ÷ read+scan | sync ÷ read | read+scan events/s ÷ events/s | read events/s ÷ events/s | CPU ÷ read+scan CPU | heap ÷ JSON |\n")
			p("|---|---:|---:|---:|---:|---:|---:|\n")
			for _, c := range []string{dynamic, typed, lwKeep, lwDrop, lwProj} {
				if r := s.results[c]; r != nil {
					p("| %s | %.1f× | %.1f× | %.1f× | %.1f× | %.1f× | %.2f |\n", c,
						r.SyncSeconds/lim.SyncSeconds, r.SyncSeconds/flo.SyncSeconds,
						lim.EventsPerSecond/r.EventsPerSecond, flo.EventsPerSecond/r.EventsPerSecond,
						r.CPUSeconds/lim.CPUSeconds, r.HeapBytesPerObject/s.json)
				}
			}
			p("\n")
		}
	}
	return b.Bytes()
}

// floorSection holds the default client against the read-only floor of
// the same run, size by size (sync within 1.3× of the floor,
// events/s at least 0.9× of it), and its per-object sync cost across
// sizes, which should stay flat: within 1.1× of the smallest size's.
func floorSection(sizes []*size) []byte {
	var rows bytes.Buffer
	var base, last float64
	var baseSize, lastSize int
	for _, s := range sizes {
		lw, flo := s.results[lwDrop], s.results[floor]
		if lw == nil || flo == nil {
			continue
		}
		perObject := lw.SyncSeconds / float64(s.pods) * 1e6
		if base == 0 {
			base, baseSize = perObject, s.pods
		}
		last, lastSize = perObject, s.pods
		fmt.Fprintf(&rows, "| %d | %.3f s | %.3f s | %.2f× | %.0f | %.0f | %.2f× | %.2f µs | %.2f µs |\n", s.pods,
			flo.SyncSeconds, lw.SyncSeconds, lw.SyncSeconds/flo.SyncSeconds,
			flo.EventsPerSecond, lw.EventsPerSecond, lw.EventsPerSecond/flo.EventsPerSecond,
			lw.CPUSeconds/float64(s.pods+s.burst)*1e6, perObject)
	}
	if rows.Len() == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteString("## Against the floor, and scaling\n\n")
	b.WriteString("The default listwatch client against `limit -scan=false` (reading the same bytes and keeping nothing) in the same run. ")
	b.WriteString("CPU / object is the process's CPU time over the pods listed plus the events taken in.\n\n")
	b.WriteString("| pods | floor sync | sync | ÷ floor (goal ≤ 1.3×) | floor events/s | events/s | ÷ floor (goal ≥ 0.9×) | CPU / object | sync / object |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	b.Write(rows.Bytes())
	if lastSize != baseSize {
		fmt.Fprintf(&b, "\nPer-object sync cost at %d pods is %.2f× its cost at %d (goal ≤ 1.1×).\n", lastSize, last/base, baseSize)
	}
	b.WriteString("\n")
	return b.Bytes()
}

// projectedTable checks the projected client against its targets:
// heap at most a tenth of the JSON the server sends, a sync no slower than
// the default client's.
func projectedTable(b *bytes.Buffer, s *size) {
	proj, def := s.results[lwProj], s.results[lwDrop]
	if proj == nil || def == nil || s.json <= 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	heap := proj.HeapBytesPerObject / s.json
	sync := proj.SyncSeconds / def.SyncSeconds
	p("Projected client (`-projected`: a `Projection` keeping metadata.labels, metadata.ownerReferences, spec.nodeName and status.phase, ")
	p("besides kind, apiVersion and the identity in metadata) against its targets:\n\n")
	p("| figure | projected | target | met |\n|---|---:|---:|---|\n")
	p("| heap / object ÷ JSON | %.3f (%.0f B of %.0f B) | ≤ 0.10 | %s |\n", heap, proj.HeapBytesPerObject, s.json, met(figure{target: 0.1}, heap))
	p("| initial sync ÷ default's | %.2f× (%.3f s vs %.3f s) | ≤ 1.00× | %s |\n", sync, proj.SyncSeconds, def.SyncSeconds, met(figure{target: 1}, sync))
	if proj.EventsPerSecond > 0 && def.EventsPerSecond > 0 {
		p("| watch events/s ÷ default's | %.2f× | — | — |\n", proj.EventsPerSecond/def.EventsPerSecond)
	}
	p("\n")
}

// benchResult is the median of one benchmark's runs.
type benchResult struct{ ns, bytes, allocs float64 }

// parseBench reads go test -bench output into medians per benchmark,
// keyed by name@GOMAXPROCS (go test leaves the -N suffix off when N is 1).
func parseBench(out []byte) (map[string]benchResult, []string) {
	runs := map[string][][3]float64{}
	var order []string
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 8 || !strings.HasPrefix(f[0], "Benchmark") || f[3] != "ns/op" || f[5] != "B/op" || f[7] != "allocs/op" {
			continue
		}
		name, procs := f[0], "1"
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name, procs = name[:i], name[i+1:]
			}
		}
		name += "@" + procs
		var v [3]float64
		for j, k := range []int{2, 4, 6} {
			v[j], _ = strconv.ParseFloat(f[k], 64)
		}
		if _, ok := runs[name]; !ok {
			order = append(order, name)
		}
		runs[name] = append(runs[name], v)
	}
	res := map[string]benchResult{}
	for name, rs := range runs {
		med := func(j int) float64 {
			vs := make([]float64, len(rs))
			for i := range rs {
				vs[i] = rs[i][j]
			}
			slices.Sort(vs)
			return vs[len(vs)/2]
		}
		res[name] = benchResult{med(0), med(1), med(2)}
	}
	return res, order
}

func workqueueSection(b *bytes.Buffer, out []byte) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	res, order := parseBench(out)
	p("## Work queue (`go test -bench . -benchmem` in bench/, medians)\n\n")
	p("The same workload on `ratelimit.Queue` and on client-go's `workqueue`: the rate-limiting queue controllers use, ")
	p("and the plain typed queue under it (which cannot delay items). ")
	p("*Sequential*: Add, Get, Done on one goroutine. *Workers*: one goroutine adds distinct keys while 1 or 8 workers Get and Done. ")
	p("*HotKeys*: 8 workers, adds drawn from 100 keys. *AddAfter*: one delayed add while 100,000 others wait. ")
	p("Each runs with GOMAXPROCS 1 and 2: with one, the goroutine of client-go's delaying queue cannot run beside the caller. ")
	p("On two cores shared with other work, figures vary by ±30%% from run to run; PROFILE.md gives the range over several runs.\n\n")
	p("| workload | listwatch | client-go rate-limiting | client-go typed | listwatch ÷ rate-limiting | listwatch ÷ typed |\n")
	p("|---|---:|---:|---:|---:|---:|\n")
	cell := func(r benchResult, ok bool) string {
		if !ok {
			return "—"
		}
		return fmt.Sprintf("%.0f ns, %.0f B, %.0f allocs", r.ns, r.bytes, r.allocs)
	}
	seen := map[string]bool{}
	for _, name := range order {
		name, procs, _ := strings.Cut(name, "@")
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			continue
		}
		w := name[:i]
		if seen[w+"@"+procs] {
			continue
		}
		seen[w+"@"+procs] = true
		lw, okLW := res[w+"/listwatch@"+procs]
		rl, okRL := res[w+"/client-go-ratelimiting@"+procs]
		ty, okTY := res[w+"/client-go-typed@"+procs]
		ratio := func(r benchResult, ok bool) string {
			if !ok || !okLW || r.ns == 0 {
				return "—"
			}
			return fmt.Sprintf("%.2f×", lw.ns/r.ns)
		}
		p("| %s, GOMAXPROCS %s | %s | %s | %s | %s | %s |\n", strings.TrimPrefix(w, "Benchmark"), procs,
			cell(lw, okLW), cell(rl, okRL), cell(ty, okTY), ratio(rl, okRL), ratio(ty, okTY))
	}
	p("\nRaw output:\n\n```\n")
	for line := range strings.Lines(string(out)) {
		if strings.HasPrefix(line, "Benchmark") {
			b.WriteString(line)
		}
	}
	p("```\n")
}

// chart draws, for the largest size, how many times better listwatch does
// than each client-go informer on every figure (log scale), with the
// target against the dynamic informer marked.
func chart(s *size) []byte {
	type bar struct {
		label string
		lw    string
		ref   string
		color string
	}
	bars := []bar{
		{"listwatch (managedFields kept) vs client-go dynamic", lwKeep, dynamic, "#2b6cb0"},
		{"listwatch (default) vs client-go dynamic", lwDrop, dynamic, "#63b3ed"},
		{"listwatch (managedFields kept) vs client-go typed", lwKeep, typed, "#c05621"},
		{"listwatch (default) vs client-go typed", lwDrop, typed, "#f6ad55"},
	}
	const (
		left, top, barH, gap, plotW = 150, 70, 14, 22, 520
		maxX                        = 100.0 // times better, right edge of the log axis
	)
	groupH := len(bars)*barH + gap
	height := top + len(figures)*groupH + 30 + len(bars)*18 + 20
	width := left + plotW + 80
	x := func(v float64) float64 { // log scale from 1 to maxX; below 1 is drawn left of the axis
		return left + plotW*math.Log10(v)/math.Log10(maxX)
	}
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	p(`<text x="10" y="22" font-size="15" font-weight="bold">How many times better listwatch does than client-go (%d pods, log scale)</text>`+"\n", s.pods)
	p(`<text x="10" y="42" fill="#555">Bars right of 1× mean listwatch wins; the black tick is the target against the dynamic informer.</text>` + "\n")
	for _, v := range []float64{1, 2, 5, 10, 20, 50, 100} {
		xv := x(v)
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", xv, top-8, xv, top+len(figures)*groupH-gap+8)
		p(`<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%g×</text>`+"\n", xv, top-12, v)
	}
	for i, f := range figures {
		y0 := top + i*groupH
		p(`<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-8, y0+len(bars)*barH/2+4, f.name)
		for j, br := range bars {
			lw, ref := s.results[br.lw], s.results[br.ref]
			if lw == nil || ref == nil {
				continue
			}
			r := ratio(f, lw, ref)
			if math.IsNaN(r) {
				continue
			}
			better := 1 / r
			if f.higher {
				better = r
			}
			y := y0 + j*barH
			x0, x1 := x(1), x(min(better, maxX))
			if x1 < x0 {
				x0, x1 = x1, x0
			}
			p(`<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", x0, y, max(x1-x0, 1), barH-2, br.color)
			p(`<text x="%.1f" y="%d" font-size="10">%.1f×</text>`+"\n", max(x(min(better, maxX)), x(1))+4, y+barH-4, better)
		}
		target := f.target
		if !f.higher {
			target = 1 / f.target
		}
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black" stroke-width="2"/>`+"\n", x(target), y0-2, x(target), y0+2*barH)
	}
	p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#333"/>`+"\n", x(1), top-8, x(1), top+len(figures)*groupH-gap+8)
	ly := top + len(figures)*groupH + 20
	for j, br := range bars {
		p(`<rect x="%d" y="%d" width="12" height="12" fill="%s"/>`+"\n", left, ly+j*18, br.color)
		p(`<text x="%d" y="%d">%s</text>`+"\n", left+18, ly+j*18+10, br.label)
	}
	p("</svg>\n")
	return b.Bytes()
}
