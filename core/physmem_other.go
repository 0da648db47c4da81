//go:build !linux

package core

// physicalMemory is 0 (unknown) where tandem has no portable way to ask.
func physicalMemory() int64 { return 0 }
