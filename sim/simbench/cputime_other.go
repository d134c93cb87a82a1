//go:build !unix

package simbench

import "time"

// cpuTime is unknown on this platform: runs per CPU-second read 0.
func cpuTime() time.Duration { return 0 }

// wallTime is unknown on this platform: virtual/wall reads 0.
func wallTime() time.Duration { return 0 }
