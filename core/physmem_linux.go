package core

import "syscall"

// physicalMemory is the machine's RAM plus swap in bytes (0 when unknown).
func physicalMemory() int64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	unit := int64(si.Unit)
	if unit == 0 {
		unit = 1
	}
	total, ok := CheckedMul(int64(si.Totalram)+int64(si.Totalswap), unit)
	if !ok {
		return 0
	}
	return total
}
