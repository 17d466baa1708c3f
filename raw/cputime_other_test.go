//go:build !unix

package raw

import "time"

// cpuTime is unknown here; the benchmarks then report no CPU figures.
func cpuTime() time.Duration { return 0 }
