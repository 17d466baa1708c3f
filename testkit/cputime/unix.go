//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Used is the CPU time, user and system, this process has used so far; 0
// if it cannot be read.
func Used() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
