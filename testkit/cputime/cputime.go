// Package cputime reads the CPU time this process has used, for benchmarks
// that report it beside wall time: on a machine shared with other work the
// CPU a run used moves far less than how long it took.
//
//	start := cputime.Used()
//	// ... the work ...
//	b.ReportMetric(float64(cputime.Used()-start)/float64(b.N), "cpu-ns/op")
package cputime
