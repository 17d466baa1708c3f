package raw

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/listwatch/listwatch/testkit/cputime"
	"github.com/stretchr/testify/require"
)

// cpuMeter reports a benchmark's speed by the CPU time the process used
// rather than the wall time. On a shared machine, time spent waiting for a
// core shows up in ns/op but not here, so these figures vary far less from
// run to run. They include the collector's work on other cores.
type cpuMeter struct {
	b     *testing.B
	start time.Duration
}

func startCPU(b *testing.B) cpuMeter { return cpuMeter{b, cputime.Used()} }

// report adds cpu-ns/op and, for a benchmark that set bytes per op, cpu-MB/s.
func (m cpuMeter) report(bytesPerOp int) {
	used := cputime.Used() - m.start
	if used <= 0 || m.b.N == 0 {
		return
	}
	m.b.ReportMetric(float64(used.Nanoseconds())/float64(m.b.N), "cpu-ns/op")
	if bytesPerOp > 0 {
		m.b.ReportMetric(float64(bytesPerOp)*float64(m.b.N)/used.Seconds()/1e6, "cpu-MB/s")
	}
}

// watchStream repeats the recorded pod frames (about 2 KB each) n times.
func watchStream(b testing.TB, n int) (body []byte, events int) {
	fx := fixtures.Load(b, "watch-from-rv.jsonl")
	frames := bytes.Count(fx.Body, []byte("\n"))
	return bytes.Repeat(fx.Body, n), n * frames
}

// podList builds a list of n recorded pods and returns it with the total
// JSON size of its items.
func podList(b testing.TB, n int) (body []byte, itemBytes int) {
	var ref struct{ Items []json.RawMessage }
	require.NoError(b, json.Unmarshal(fixtures.Load(b, "pod-list.json").Body, &ref))
	var buf bytes.Buffer
	buf.WriteString(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"75"},"items":[`)
	for i := range n {
		if i > 0 {
			buf.WriteByte(',')
		}
		item := ref.Items[i%len(ref.Items)]
		buf.Write(item)
		itemBytes += len(item)
	}
	buf.WriteString("]}\n")
	return buf.Bytes(), itemBytes
}

// benchStream reads the repeated watch fixture with read once per op and
// reports bytes, CPU and units (frames or events) per second.
func benchStream(b *testing.B, unit string, read func(io.Reader)) {
	body, events := watchStream(b, 256)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	r := bytes.NewReader(body)
	cpu := startCPU(b)
	for b.Loop() {
		r.Reset(body)
		read(r)
	}
	cpu.report(len(body))
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), unit)
}

// BenchmarkFramer measures finding frame boundaries alone (MB/s).
func BenchmarkFramer(b *testing.B) {
	benchStream(b, "frames/s", func(r io.Reader) {
		f := newFramer(r, 0)
		for {
			if _, err := f.Next(); err != nil {
				return
			}
		}
	})
}

// BenchmarkWatchDecode measures whole events: framing, the envelope, the
// metadata and the copy of each object.
func BenchmarkWatchDecode(b *testing.B) {
	benchStream(b, "events/s", func(r io.Reader) {
		w := newTestWatcher(r, &Decoder{})
		for {
			if _, err := w.Next(); err != nil {
				return
			}
		}
	})
}

// BenchmarkWatchDecodeBatches is BenchmarkWatchDecode framed on one
// goroutine and built on another, as httpwatch reads a watch (decision
// 35): events/s is the pair's throughput, cpu-ns/op what both cost.
func BenchmarkWatchDecodeBatches(b *testing.B) {
	benchStream(b, "events/s", func(r io.Reader) {
		batches := make(chan *Batch, 2)
		go func() {
			defer close(batches)
			for bt := range (&Decoder{}).Events(r).Batches() {
				batches <- bt
			}
		}()
		for bt := range batches {
			for _, f := range bt.Frames {
				if _, err := buildFrame(f); err != nil {
					b.Error(err)
				}
			}
			bt.Release()
		}
	})
}

// BenchmarkListScan measures a 500-pod page; alloc/JSON is the bytes
// allocated per item over the item's JSON size (aim: at most 1.1). The
// projected case keeps what a node agent reads: labels, owners, node, phase.
func BenchmarkListScan(b *testing.B) {
	projection, err := NewProjection("metadata.labels", "metadata.ownerReferences", "spec.nodeName", "status.phase")
	require.NoError(b, err)
	for _, tc := range []struct {
		name string
		d    Decoder
		hint int
	}{
		{"full", Decoder{}, 500},
		{"dropManagedFields", Decoder{DropManagedFields: true}, 500},
		{"projected", Decoder{DropManagedFields: true, Projection: projection}, 500},
	} {
		b.Run(tc.name, func(b *testing.B) {
			const n = 500
			body, itemBytes := podList(b, n)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			r := bytes.NewReader(body)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			cpu := startCPU(b)
			for b.Loop() {
				r.Reset(body)
				if _, err := tc.d.DecodeList(r, tc.hint); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report(len(body))
			runtime.ReadMemStats(&after)
			perItem := float64(after.TotalAlloc-before.TotalAlloc) / float64(b.N) / n
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
			b.ReportMetric(perItem, "B/item")
			b.ReportMetric(perItem/(float64(itemBytes)/n), "alloc/JSON")
		})
	}
}

// BenchmarkReadLimit is the machine's limit for BenchmarkFramer: the same
// stream read into the same 32 KB buffer, and then every byte read once by
// the runtime's vectorised IndexByte. The framer's MB/s over this one's is
// how close it comes to the memory bandwidth on this machine.
func BenchmarkReadLimit(b *testing.B) {
	body, _ := watchStream(b, 256)
	for _, look := range []bool{false, true} {
		name := "read"
		if look {
			name = "read+IndexByte"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			r := bytes.NewReader(body)
			buf := make([]byte, initialBufSize)
			cpu := startCPU(b)
			for b.Loop() {
				r.Reset(body)
				for {
					n, err := r.Read(buf)
					if look && bytes.IndexByte(buf[:n], 0) >= 0 {
						b.Fatal("NUL in the stream")
					}
					if err != nil {
						break
					}
				}
			}
			cpu.report(len(body))
		})
	}
}

// BenchmarkScanner measures the framer's scanner alone (it frames,
// validates and notes the event's object) on frames already in memory
// (MB/s), without the reader around it: the recorded pods; pods
// whose JSON is also held escaped in an annotation, as kubectl's
// last-applied-configuration does (a backslash every few bytes); and
// secrets, whose data is long base64 strings.
func BenchmarkScanner(b *testing.B) {
	pods, _ := watchStream(b, 16)
	pod := bytes.SplitN(pods, []byte("\n"), 2)[0]
	lit, err := json.Marshal(string(pod))
	require.NoError(b, err)
	escaped := []byte(`{"type":"ADDED","object":{"metadata":{"name":"a","annotations":{"last-applied":` + string(lit) + `}}}}` + "\n")
	secret := []byte(`{"type":"ADDED","object":{"kind":"Secret","metadata":{"name":"s"},"data":{"tls.crt":"` +
		strings.Repeat("TUlJQ2FqQ0NBWmFnQXdJQkFnSUJBREFOQmdrcWhraUc5dzBCQVFzRkFE", 80) + `"}}}` + "\n")
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{"pods", pods},
		{"escaped", bytes.Repeat(escaped, 32)},
		{"secrets", bytes.Repeat(secret, 32)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			body := tc.body
			b.SetBytes(int64(len(body)))
			cpu := startCPU(b)
			for b.Loop() {
				var s frameScanner
				s.spans = &spanNotes{level: 3}
				for i := 0; i < len(body); {
					for i < len(body) && body[i] != '{' {
						i++
					}
					s.reset()
					n, _ := s.feed(body[i:])
					i += n
				}
			}
			cpu.report(len(body))
		})
	}
}

// BenchmarkBuildObject measures building Objects from list items already in
// memory: the top level and metadata read, managedFields cut, kind and
// apiVersion inserted, and the copy.
func BenchmarkBuildObject(b *testing.B) {
	var ref struct{ Items []json.RawMessage }
	require.NoError(b, json.Unmarshal(fixtures.Load(b, "pod-list.json").Body, &ref))
	typeMeta := typeMetaFor("PodList", "v1")
	size := 0
	for _, it := range ref.Items {
		size += len(it)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	cpu := startCPU(b)
	for b.Loop() {
		for _, it := range ref.Items {
			if _, err := buildObject(it, buildOptions{dropManagedFields: true, typeMeta: typeMeta}); err != nil {
				b.Fatal(err)
			}
		}
	}
	cpu.report(size)
}
