package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseBenchTakesMedians(t *testing.T) {
	out := `goos: linux
BenchmarkAddAfter/listwatch-2   	 100	 500 ns/op	 48 B/op	 1 allocs/op
BenchmarkAddAfter/listwatch-2   	 100	 900 ns/op	 40 B/op	 1 allocs/op
BenchmarkAddAfter/listwatch-2   	 100	 600 ns/op	 44 B/op	 0 allocs/op
BenchmarkAddAfter/client-go-ratelimiting-2 	 100	 1200 ns/op	 64 B/op	 1 allocs/op
BenchmarkAddAfter/client-go-ratelimiting 	 100	 1300 ns/op	 64 B/op	 1 allocs/op
PASS
`
	res, order := parseBench([]byte(out))
	require.Equal(t, []string{"BenchmarkAddAfter/listwatch@2", "BenchmarkAddAfter/client-go-ratelimiting@2", "BenchmarkAddAfter/client-go-ratelimiting@1"}, order)
	require.Equal(t, benchResult{600, 44, 1}, res["BenchmarkAddAfter/listwatch@2"])
	require.Equal(t, benchResult{1200, 64, 1}, res["BenchmarkAddAfter/client-go-ratelimiting@2"])
	require.Equal(t, benchResult{1300, 64, 1}, res["BenchmarkAddAfter/client-go-ratelimiting@1"])
}

func TestTargets(t *testing.T) {
	lower := figures[0]  // sync: at most 0.25×
	higher := figures[1] // events/s: at least 4×
	require.Equal(t, "yes", met(lower, 0.2))
	require.Equal(t, "**no**", met(lower, 0.3))
	require.Equal(t, "yes", met(higher, 4))
	require.Equal(t, "**no**", met(higher, 3.9))
	require.Equal(t, "—", met(higher, math.NaN()))
}

func TestReportFromResults(t *testing.T) {
	dir := t.TempDir()
	lines := []string{
		`{"client":"client-go dynamic","pods":10,"burst":10,"json_bytes_per_object":4000,"sync_seconds":4,"events_per_second":1000,"heap_bytes_per_object":24000,"peak_rss_bytes":400000000,"cpu_seconds":10}`,
		`{"client":"client-go dynamic","pods":10,"burst":10,"json_bytes_per_object":4000,"sync_seconds":2,"events_per_second":3000,"heap_bytes_per_object":24000,"peak_rss_bytes":400000000,"cpu_seconds":10}`,
		`{"client":"client-go dynamic","pods":10,"burst":10,"json_bytes_per_object":4000,"sync_seconds":3,"events_per_second":2000,"heap_bytes_per_object":24000,"peak_rss_bytes":400000000,"cpu_seconds":10}`,
		`{"client":"client-go typed","pods":10,"burst":10,"json_bytes_per_object":4000,"sync_seconds":2,"events_per_second":2000,"heap_bytes_per_object":8000,"peak_rss_bytes":200000000,"cpu_seconds":8}`,
		`{"client":"listwatch (managedFields kept)","pods":10,"burst":10,"json_bytes_per_object":4000,"sync_seconds":0.3,"events_per_second":20000,"heap_bytes_per_object":4400,"peak_rss_bytes":90000000,"cpu_seconds":1}`,
		`{"client":"listwatch (default: managedFields dropped)","pods":10,"burst":10,"json_bytes_per_object":4000,"sync_seconds":0.25,"events_per_second":20000,"heap_bytes_per_object":3700,"peak_rss_bytes":80000000,"cpu_seconds":1}`,
		`{"client":"listwatch (projected: labels, owners, node, phase)","pods":10,"burst":10,"json_bytes_per_object":4000,"sync_seconds":0.2,"events_per_second":25000,"heap_bytes_per_object":600,"peak_rss_bytes":20000000,"cpu_seconds":1}`,
	}
	results := filepath.Join(dir, "n10.jsonl")
	require.NoError(t, os.WriteFile(results, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	sizes := filepath.Join(dir, "sizes.tsv")
	require.NoError(t, os.WriteFile(sizes, []byte("clientgo-dynamic 30000000\nclientgo-typed 31000000\nlistwatch 7000000\n"), 0o644))
	md, svg := filepath.Join(dir, "RESULTS.md"), filepath.Join(dir, "ratios.svg")
	require.NoError(t, run("test machine", sizes, "", md, svg, []string{results}))

	b, err := os.ReadFile(md)
	require.NoError(t, err)
	text := string(b)
	require.Contains(t, text, "| client-go dynamic | 3 | 3.000 s | 2000 |", "medians over the repetitions")
	require.Contains(t, text, "| initial sync | ≤ 0.25× | 0.10× | yes |")
	require.Contains(t, text, "| watch events/s | ≥ 4.00× | 10.00× | yes |")
	require.Contains(t, text, "| stripped binary | ≤ 0.30× | 0.23× | yes |")
	require.Contains(t, text, "| heap / object ÷ JSON | 0.150 (600 B of 4000 B) | ≤ 0.10 | **no** |")
	require.Contains(t, text, "| initial sync ÷ default's | 0.80× (0.200 s vs 0.250 s) | ≤ 1.00× | yes |")
	require.NotContains(t, text, "Against the floor", "no floor, no floor table")
	s, err := os.ReadFile(svg)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(s), "<svg "))
	require.Contains(t, string(s), "10.0×")
}

func TestFloorAndScalingTable(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, lines ...string) string {
		f := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(f, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
		return f
	}
	small := write("n10.jsonl",
		`{"client":"client-go dynamic","pods":10,"burst":10,"sync_seconds":4,"events_per_second":1000}`,
		`{"client":"limit (read only)","pods":10,"burst":10,"sync_seconds":0.1,"events_per_second":100000}`,
		`{"client":"listwatch (default: managedFields dropped)","pods":10,"burst":10,"sync_seconds":0.12,"events_per_second":95000,"cpu_seconds":0.002}`)
	large := write("n30.jsonl",
		`{"client":"limit (read only)","pods":30,"burst":10,"sync_seconds":0.3,"events_per_second":100000}`,
		`{"client":"listwatch (default: managedFields dropped)","pods":30,"burst":10,"sync_seconds":0.396,"events_per_second":80000,"cpu_seconds":0.004}`)
	md := filepath.Join(dir, "RESULTS.md")
	require.NoError(t, run("m", "", "", md, filepath.Join(dir, "c.svg"), []string{small}, large))
	b, err := os.ReadFile(md)
	require.NoError(t, err)
	text := string(b)
	require.Contains(t, text, "| 10 | 0.100 s | 0.120 s | 1.20× | 100000 | 95000 | 0.95× | 100.00 µs | 12000.00 µs |")
	require.Contains(t, text, "| 30 | 0.300 s | 0.396 s | 1.32× | 100000 | 80000 | 0.80× | 100.00 µs | 13200.00 µs |")
	require.Contains(t, text, "Per-object sync cost at 30 pods is 1.10× its cost at 10")
	require.NotContains(t, text, "## 30 pods", "a scaling size gets no table of its own")
}
