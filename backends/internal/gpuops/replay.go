package gpuops

// What a recorded graph depends on besides its nodes, for a backend that runs the recording again
// (gpubackend's replay): the encoder's settings and the device's limits.

// Setting is what the encoder records a graph with, beside the graph itself: two equal Settings
// record the same graph alike. Every Use* call (fusion, kernels, FLASH_ATTN_EXT's split and
// batches) bumps gen, so gen stands for all of them.
type Setting struct {
	dev     Device
	soft    bool
	softErr bool
	gen     uint64
}

// Setting returns the encoder's current Setting (the kernel family is read from the environment
// as Start reads it).
func (e *Encoder) Setting() Setting {
	soft, err := readKernelsEnv(e.dev)
	return Setting{dev: *e.dev, soft: soft, softErr: err != nil, gen: e.gen}
}

// Rearm prepares the encoder for running its last recorded graph again: the index checks'
// status words are zeroed.
func (e *Encoder) Rearm() error {
	if len(e.checks) == 0 {
		return nil
	}
	return e.status.Memset(0, uint64(len(e.checks))*e.dev.statusStride(), 0)
}

// CountBarriers adds n barriers run again to Barriers.
func (e *Encoder) CountBarriers(n int) { e.barriers += n }
