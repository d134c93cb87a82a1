//go:build !unix

package fakeapibench

import "time"

// ProcessCPU is unknown on this platform: events per CPU-second read 0.
func ProcessCPU() time.Duration { return 0 }

// WallClock is unknown on this platform.
func WallClock() time.Duration { return 0 }
