//go:build !linux

package core

// adviseHugePages does nothing off Linux.
func adviseHugePages(b []byte) {}
