//go:build !unix

package snapshot

import "time"

// cpuTime is unknown here; the benchmarks then report no CPU figures.
func cpuTime() time.Duration { return 0 }
