package core

// hugePageSize is the size of an x86-64/arm64 transparent huge page.
const hugePageSize = 2 << 20

// hugeRange is the part of n bytes at address p that whole huge pages cover: its offset from p
// and its length (0 when no huge page fits).
func hugeRange(p uintptr, n int) (off, length uintptr) {
	off = (hugePageSize - p%hugePageSize) % hugePageSize
	if uintptr(n) < off {
		return 0, 0
	}
	length = (uintptr(n) - off) / hugePageSize * hugePageSize
	if length == 0 {
		return 0, 0
	}
	return off, length
}
