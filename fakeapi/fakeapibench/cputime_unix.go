//go:build unix

package fakeapibench

import (
	"syscall"
	"time"
)

// ProcessCPU is the process's user + system CPU time so far (0 where the
// operating system does not say).
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// WallClock reads the system clock, which synctest does not virtualise.
func WallClock() time.Duration {
	var tv syscall.Timeval
	if err := syscall.Gettimeofday(&tv); err != nil {
		return 0
	}
	return time.Duration(tv.Nano())
}
