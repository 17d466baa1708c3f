//go:build !unix

package listwatch

import "time"

// cpuTime is unknown here; the benchmarks then report no CPU figure.
func cpuTime() time.Duration { return 0 }
