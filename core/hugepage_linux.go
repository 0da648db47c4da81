//go:build linux

package core

import (
	"syscall"
	"unsafe"
)

// adviseHugePages asks Linux to back the huge-page-aligned part of b with transparent huge pages
// (madvise MADV_HUGEPAGE; in the kernel's usual "madvise" mode anonymous memory gets none
// otherwise). Kernels stream weights and caches through these buffers, and with 4 KiB pages
// every 4 KiB costs a TLB miss and a restart of the hardware prefetcher. It is advice: where the
// kernel refuses, nothing changes.
func adviseHugePages(b []byte) {
	// Only the address is read, to find the aligned part inside b.
	off, n := hugeRange(uintptr(unsafe.Pointer(unsafe.SliceData(b))), len(b))
	if n == 0 {
		return
	}
	_ = syscall.Madvise(b[off:off+n], 14) // MADV_HUGEPAGE
}
