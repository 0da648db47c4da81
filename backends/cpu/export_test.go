package cpu

// SetFAKeyCacheBytes sets the bound on a worker's packed keys of the tiled FLASH_ATTN_EXT for a
// test and returns what restores it.
func SetFAKeyCacheBytes(n int64) (restore func()) {
	old := faKeyCacheBytes
	faKeyCacheBytes = n
	return func() { faKeyCacheBytes = old }
}
