package tests

// DeepSeek V4's hyper-connection ops run on the CPU only for now (no GPU encoder yet).
func init() {
	for _, c := range dsv4Cases() {
		gpuUnsupported[c.Name] = "DSV4_HC_COMB/PRE/POST: no GPU encoder yet (CPU only)"
	}
}

// LIGHTNING_INDEXER runs on the CPU only for now (no GPU encoder yet).
func init() {
	for _, c := range lightningCases() {
		gpuUnsupported[c.Name] = "LIGHTNING_INDEXER: no GPU encoder yet (CPU only)"
	}
}
