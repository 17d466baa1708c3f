// Package parked lets a test wait for a goroutine to reach a blocking point
// without sleeping.
//
// A goroutine parked on a lock or a wait group stays parked until another
// goroutine acts, so seeing it there is a synchronisation point that does not
// depend on how soon the scheduler runs anything: a test can assert that
// something has not happened yet only once the code that would do it is
// known to be waiting.
//
//	require.Eventually(t, func() bool { return parked.In("(*Informer).AddEventHandler", "sync.Mutex.Lock") }, wait, time.Millisecond)
package parked

import (
	"runtime"
	"strings"
)

// In reports whether some goroutine is blocked in fn with the given wait
// reason, as runtime.Stack prints it ("sync.WaitGroup.Wait",
// "sync.Mutex.Lock"): fn must be the first frame outside the runtime and
// package sync.
func In(fn, reason string) bool {
	for g := range strings.SplitSeq(stacks(), "\n\n") {
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

// Running reports whether fn is on the stack of any goroutine.
func Running(fn string) bool { return strings.Contains(stacks(), fn) }

func stacks() string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}
