package gpuops

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// TestFlashAttnSoftwareUnsplittable: on a software device a FLASH_ATTN_EXT node whose one-row key
// dot would pass llvmpipe's loop limit is supported only when its keys can split; where the
// device's grid cannot hold the split it is refused (it would otherwise run the one-row shader
// and give a wrong result), and a hardware device takes it either way.
func TestFlashAttnSoftwareUnsplittable(t *testing.T) {
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	node := func(dk, nkv int64) *core.Tensor {
		q := c.NewTensor(core.TypeF32, dk, 1, 1, 1)
		k := c.NewTensor(core.TypeF16, dk, nkv, 1, 1)
		v := c.NewTensor(core.TypeF16, dk, nkv, 1, 1)
		return c.FlashAttnExt(q, k, v, nil, 0.1, 0, 0)
	}
	dev := func(software bool, groups uint32) *Device {
		return &Device{Software: software, Storage16Bit: true,
			MaxComputeWorkGroupCount: [3]uint32{groups, 65535, 65535}, MaxStorageBufferRange: 1 << 30,
			MaxComputeWorkGroupSize: [3]uint32{1024, 1024, 64}, MaxComputeWorkGroupInvocations: 1024,
			MaxComputeSharedMemorySize: 32768, MinStorageBufferOffsetAlignment: 16}
	}
	long, short := node(256, 16384), node(256, 1024)
	for _, tc := range []struct {
		name string
		d    *Device
		n    *core.Tensor
		want bool
	}{
		{"software, splits", dev(true, 65535), long, true},
		{"software, grid too small to split", dev(true, 1), long, false},
		{"software, under the limit", dev(true, 1), short, true},
		{"hardware, grid too small to split", dev(false, 1), long, true},
	} {
		if got := supportsFlashAttn(tc.d, tc.n); got != tc.want {
			t.Errorf("%s: supported %v, want %v", tc.name, got, tc.want)
		}
	}
}
