package ratelimit_test

import (
	"runtime"
	"strings"
)

// parkedIn reports whether a goroutine is blocked in fn with the given wait
// reason, as runtime.Stack prints it ("sync.WaitGroup.Wait",
// "sync.Mutex.Lock"): fn must be the first frame outside the runtime and
// package sync. A goroutine parked on a lock or a wait group stays parked
// until another one acts, so seeing it there is a synchronisation point that
// does not depend on how soon the scheduler runs anything.
func parkedIn(fn, reason string) bool {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		lines := strings.Split(g, "\n")
		if !strings.Contains(lines[0], "["+reason) {
			continue
		}
		// Frames come as a function line followed by a file line.
		for i := 1; i < len(lines); i += 2 {
			f := lines[i]
			if strings.HasPrefix(f, "runtime.") || strings.HasPrefix(f, "sync.") || strings.HasPrefix(f, "internal/") {
				continue
			}
			if strings.Contains(f, fn) {
				return true
			}
			break
		}
	}
	return false
}
