package snapshot

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/testkit/cputime"
	"github.com/tidwall/gjson"
)

// realPods returns n copies of a real pod as an informer caches it
// (managedFields dropped).
func realPods(b *testing.B, n int) []*raw.Object {
	item := gjson.GetBytes(fixtures.Load(b, "pod-list.json").Body, "items.0")
	tmpl := strings.Replace(item.Raw, `"managedFields":`+item.Get("metadata.managedFields").Raw+`,`, "", 1)
	tmpl = strings.Replace(tmpl, `"name":"`+item.Get("metadata.name").String()+`"`, `"name":"%s"`, 1)
	out := make([]*raw.Object, n)
	for i := range out {
		o, err := raw.NewObject(fmt.Appendf(nil, tmpl, fmt.Sprintf("pod-%06d", i)))
		if err != nil {
			b.Fatal(err)
		}
		out[i] = o
	}
	return out
}

// benchSizes are the pod counts of the file benchmarks: the two.
var benchSizes = []int{10000, 50000}

// BenchmarkWriteFile writes a snapshot of real pods to disk, synced
// (decision 32), and reports its size and the CPU time per write.
func BenchmarkWriteFile(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			s := &Snapshot{Key: testKey, ResourceVersion: "42", Objects: realPods(b, n), Written: time.Now()}
			path := filepath.Join(b.TempDir(), "pods.snap")
			var buf bytes.Buffer
			if err := Encode(&buf, s); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(buf.Len()))
			b.ResetTimer()
			cpu := cputime.Used()
			for range b.N {
				if err := WriteFile(path, s); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cputime.Used()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(buf.Len()), "file-B")
		})
	}
}

// BenchmarkReadFile reads that snapshot back, every object checked, and
// reports the CPU time per read.
func BenchmarkReadFile(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			s := &Snapshot{Key: testKey, ResourceVersion: "42", Objects: realPods(b, n), Written: time.Now()}
			path := filepath.Join(b.TempDir(), "pods.snap")
			if err := WriteFile(path, s); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu := cputime.Used()
			for range b.N {
				if _, err := ReadFile(path, testKey, Limits{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cputime.Used()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
