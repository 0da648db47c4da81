package tests

import "strings"

// The GPU rope shader runs NORMAL and NEOX without an offset; ggml_rope_multi's modes and
// ggml_rope_set_offset run on the CPU for now (the scheduler places them there).
func init() {
	for _, c := range Cases() {
		n := c.Name
		if !strings.HasPrefix(n, "norm/ROPE") {
			continue
		}
		switch {
		case strings.Contains(n, "mode=8,") || strings.Contains(n, "mode=24,") || strings.Contains(n, "mode=40,"):
			gpuUnsupported[n] = "ROPE: the multi-section modes (MROPE, VISION, IMROPE) are CPU only for now"
		case strings.Contains(n, "offset"):
			gpuUnsupported[n] = "ROPE: ggml_rope_set_offset's offset is CPU only for now"
		}
	}
}
