package httpwatch

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// watchStream repeats the recorded pod frames (about 2 KB each) n times.
func watchStream(b *testing.B, n int) (body []byte, events int) {
	fx := loadFixture(b, "watch-from-rv.jsonl")
	frames := bytes.Count(fx.Body, []byte("\n"))
	return bytes.Repeat(fx.Body, n), n * frames
}

// podList builds a list of n recorded pods and returns it with the total
// JSON size of its items.
func podList(b testing.TB, n int) (body []byte, itemBytes int) {
	var ref struct{ Items []json.RawMessage }
	require.NoError(b, json.Unmarshal(loadFixture(b, "pod-list.json").Body, &ref))
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

// BenchmarkFramer measures finding frame boundaries alone (MB/s).
func BenchmarkFramer(b *testing.B) {
	body, events := watchStream(b, 256)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	r := bytes.NewReader(body)
	for b.Loop() {
		r.Reset(body)
		f := NewFramer(r, 0)
		for {
			if _, err := f.Next(); err != nil {
				break
			}
		}
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}

// BenchmarkWatchDecode measures whole events: framing, the envelope, the
// metadata and the copy of each object.
func BenchmarkWatchDecode(b *testing.B) {
	body, events := watchStream(b, 256)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	r := bytes.NewReader(body)
	for b.Loop() {
		r.Reset(body)
		w := newStreamWatcher(io.NopCloser(r), func() {}, "WATCH", "/bench", &scanOptions{})
		for {
			if _, err := w.Next(); err != nil {
				break
			}
		}
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkListScan measures a 500-pod page; alloc/JSON is the bytes
// allocated per item over the item's JSON size (aim: at most 1.1).
func BenchmarkListScan(b *testing.B) {
	for _, tc := range []struct {
		name string
		so   scanOptions
	}{{"full", scanOptions{sizeHint: 500}}, {"dropManagedFields", scanOptions{sizeHint: 500, drop: true}}} {
		b.Run(tc.name, func(b *testing.B) {
			const n = 500
			body, itemBytes := podList(b, n)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			r := bytes.NewReader(body)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				r.Reset(body)
				if _, err := scanList(r, &tc.so); err != nil {
					b.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			perItem := float64(after.TotalAlloc-before.TotalAlloc) / float64(b.N) / n
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
			b.ReportMetric(perItem, "B/item")
			b.ReportMetric(perItem/(float64(itemBytes)/n), "alloc/JSON")
		})
	}
}

// BenchmarkDropManagedFields measures the exported transform on a cached
// object (one copy without the field).
func BenchmarkDropManagedFields(b *testing.B) {
	p, err := scanList(bytes.NewReader(loadFixture(b, "pod-list.json").Body), &scanOptions{})
	require.NoError(b, err)
	o := p.Items[0]
	b.SetBytes(int64(len(o.Raw())))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DropManagedFields(o); err != nil {
			b.Fatal(err)
		}
	}
}
