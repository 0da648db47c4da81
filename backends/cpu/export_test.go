package cpu

import "github.com/tandem-ml/tandem/backends/cpu/internal/kern"

// SetFAKeyCacheBytes sets the bound on a worker's packed keys of the tiled FLASH_ATTN_EXT for a
// test and returns what restores it.
func SetFAKeyCacheBytes(n int64) (restore func()) {
	old := faKeyCacheBytes
	faKeyCacheBytes = n
	return func() { faKeyCacheBytes = old }
}

// HasBF16Pairs reports whether the kernels multiply bf16 pairs on this CPU (where core.PrecBF16
// rounds F16 products).
func HasBF16Pairs() bool { return kern.HasBF16Pairs() }

// LayoutChecks returns how many times b checked a reused plan's layouts.
func LayoutChecks(b *Backend) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.layoutChecks
}
