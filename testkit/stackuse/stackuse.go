// Package stackuse measures how much goroutine stack a piece of code
// grows, for tests that prove a parser walks deep input without recursing.
//
//	grown := stackuse.Growth(func() { parse(deep) })
//	require.Less(t, grown, uint64(1<<20))
package stackuse

import (
	"runtime"
	"runtime/debug"
)

// Growth runs f on a new goroutine and returns how much stack memory was
// in use at its end beyond its start. The collector is off meanwhile,
// since it may shrink a stack that has grown.
func Growth(f func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	grown := make(chan uint64)
	go func() {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		grown <- after.StackInuse - min(before.StackInuse, after.StackInuse)
	}()
	return <-grown
}
