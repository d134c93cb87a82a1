//go:build unix

package store

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user+system) the process has used, so
// benchmarks can report a cost that other processes' load does not inflate.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
