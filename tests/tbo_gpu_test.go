package tests

// Cases added after running ggml's test-backend-ops over RPC (docs/test-backend-ops.md) that the
// GPU backends leave to the CPU.
func init() {
	gpuUnsupported["train/GET_ROWS_BACK(f16 gradient)"] = "GET_ROWS_BACK: the GPU shader reads f32 gradients only (ggml's CPU also takes f16)"
}

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
