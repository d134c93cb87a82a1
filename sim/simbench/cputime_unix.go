//go:build unix

package simbench

import (
	"syscall"
	"time"
)

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// wallTime reads the system clock, which synctest does not virtualise.
func wallTime() time.Duration {
	var tv syscall.Timeval
	if err := syscall.Gettimeofday(&tv); err != nil {
		return 0
	}
	return time.Duration(tv.Nano())
}
