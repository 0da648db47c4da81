//go:build cgo && !novulkan

package vulkan

import (
	"fmt"
	"math"
	"testing"

	"github.com/tandem-ml/tandem/backends/internal/gpuops"
	"github.com/tandem-ml/tandem/backends/internal/gputest"
	"github.com/tandem-ml/tandem/core"
)

// FLASH_ATTN_EXT of a decode step (one query row, TinyLlama's heads: 32 over 4 KV heads of 64,
// f16 K/V and mask), computed with the keys split over workgroups and with one workgroup per row.

// decodeAttn builds the decode-step attention over nkv keys.
func decodeAttn(c *core.Context, nkv int64) *core.Tensor {
	q := c.NewTensor(core.TypeF32, 64, 1, 32, 1)
	k := c.NewTensor(core.TypeF16, 64, nkv, 4, 1)
	v := c.NewTensor(core.TypeF16, 64, nkv, 4, 1)
	m := c.NewTensor(core.TypeF16, nkv, 1, 1, 1)
	return c.FlashAttnExt(q, k, v, m, 0.125, 0, 0)
}

// TestFlashAttnSplitMatchesOneRow: both ways give the same output (to f32 rounding) for 777 keys;
// the split records its two passes with a barrier between them.
func TestFlashAttnSplitMatchesOneRow(t *testing.T) {
	be := newBackend(t)
	var out *core.Tensor
	g := gputest.Graph(t, be, func(c *core.Context) *core.Tensor { out = decodeAttn(c, 777); return out })
	run := func(split bool) ([]float32, int, int) {
		be.sh.Encoder().UseFlashAttnSplit(split)
		d0, b0 := be.sh.Dispatches(), be.sh.Barriers()
		if err := be.GraphCompute(g); err != nil {
			t.Fatal(err)
		}
		v, err := core.GetFloat32s(out)
		if err != nil {
			t.Fatal(err)
		}
		return v, be.sh.Dispatches() - d0, be.sh.Barriers() - b0
	}
	defer be.sh.Encoder().UseFlashAttnSplit(true)
	one, d1, _ := run(false)
	split, d2, b2 := run(true)
	if d1 != 1 || d2 != 2 || b2 != 1 {
		t.Errorf("one row: %d dispatches; split: %d dispatches, %d barriers (want 1; 2, 1)", d1, d2, b2)
	}
	var num, den float64
	for i := range one {
		d := float64(split[i] - one[i])
		num += d * d
		den += float64(one[i]) * float64(one[i])
	}
	if nmse := num / den; !(nmse < 1e-10) || math.IsNaN(nmse) {
		t.Errorf("split against one row: NMSE %g", nmse)
	}
}

// TestFlashAttnCombineBatches: the key split gives the same output, bit for bit, whatever its load
// batches (the device's choice, lavapipe's 8 keys' values, 16 key dimensions and 1 split, against
// 32/64/8 as a GPU takes them for f16 K and V and odd ones: 777 keys, 13 splits of 64 keys, 64
// key dimensions, batches with remainders), with sinks and with whole splits masked off (they saw
// no key), and agrees with the one-row shader.
func TestFlashAttnCombineBatches(t *testing.T) {
	be := newBackend(t)
	var out, mask *core.Tensor
	g := gputest.Graph(t, be, func(c *core.Context) *core.Tensor {
		out = decodeAttn(c, 777)
		mask = out.Src[3]
		c.FlashAttnExtAddSinks(out, c.NewTensor(core.TypeF32, 32, 1, 1, 1))
		return out
	})
	m, err := core.GetFloat32s(mask)
	if err != nil {
		t.Fatal(err)
	}
	ninf := float32(math.Inf(-1))
	for j := range m {
		if (j >= 64 && j < 128) || (j >= 256 && j < 512) { // splits 1 and 4-7
			m[j] = ninf
		}
	}
	if err := core.SetFloat32s(mask, m); err != nil {
		t.Fatal(err)
	}
	enc := be.sh.Encoder()
	defer enc.UseFlashAttnBatches(gpuops.FABatches{})
	defer enc.UseFlashAttnSplit(true)
	run := func() []float32 {
		if err := be.GraphCompute(g); err != nil {
			t.Fatal(err)
		}
		v, err := core.GetFloat32s(out)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	enc.UseFlashAttnSplit(false)
	one := run()
	enc.UseFlashAttnSplit(true)
	var want []float32
	for _, batch := range []gpuops.FABatches{{}, {Values: 8, Dims: 16, Splits: 1}, {Values: 32, Dims: 64, Splits: 8},
		{Values: 3, Dims: 24, Splits: 3}, {Values: 1, Dims: 1, Splits: 5}} {
		enc.UseFlashAttnBatches(batch)
		got := run()
		if want == nil {
			want = got
			var num, den float64
			for i := range one {
				d := float64(got[i] - one[i])
				num += d * d
				den += float64(one[i]) * float64(one[i])
			}
			if nmse := num / den; !(nmse < 1e-10) {
				t.Errorf("split against one row: NMSE %g", nmse)
			}
			continue
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("batches %+v: output %d is %g, the device's batches give %g", batch, i, got[i], want[i])
			}
		}
	}
}

// BenchmarkFlashAttnDecode times the decode-step attention over 512 and 2048 keys, split and one
// workgroup per row:
//
//	go test ./backends/vulkan -run '^$' -bench FlashAttnDecode -benchtime 20x
func BenchmarkFlashAttnDecode(b *testing.B) {
	for _, nkv := range []int64{512, 2048} {
		for _, split := range []bool{false, true} {
			b.Run(fmt.Sprintf("nkv=%d/split=%v", nkv, split), func(b *testing.B) {
				be := benchBackend(b)
				be.sh.Encoder().UseFlashAttnSplit(split)
				g := gputest.Graph(b, be, func(c *core.Context) *core.Tensor { return decodeAttn(c, nkv) })
				if err := be.GraphCompute(g); err != nil { // compiles the pipelines
					b.Fatal(err)
				}
				for b.Loop() {
					if err := be.GraphCompute(g); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N), "µs/op")
			})
		}
	}
}

// TestFlashAttnSoftwareLoopLimit: llvmpipe ends a loop after 65,535 iterations over an
// invocation, and the one-row shader's key dot over 16384 keys of 256 crosses it (its output was
// wrong: NMSE 1.4e3 against the split). On a software device such a node takes the key split
// even when the one-row shader is asked for, and gives the split's result.
func TestFlashAttnSoftwareLoopLimit(t *testing.T) {
	be := newBackend(t)
	if be.Device().Type() != core.DeviceAccel {
		t.Skip("not a software device")
	}
	var out *core.Tensor
	g := gputest.Graph(t, be, func(c *core.Context) *core.Tensor {
		q := c.NewTensor(core.TypeF32, 256, 1, 1, 1)
		k := c.NewTensor(core.TypeF16, 256, 16384, 1, 1)
		v := c.NewTensor(core.TypeF16, 256, 16384, 1, 1)
		out = c.FlashAttnExt(q, k, v, nil, 0.1, 0, 0)
		return out
	})
	run := func(split bool) ([]float32, int) {
		be.sh.Encoder().UseFlashAttnSplit(split)
		d0 := be.sh.Dispatches()
		if err := be.GraphCompute(g); err != nil {
			t.Fatal(err)
		}
		v, err := core.GetFloat32s(out)
		if err != nil {
			t.Fatal(err)
		}
		return v, be.sh.Dispatches() - d0
	}
	defer be.sh.Encoder().UseFlashAttnSplit(true)
	forced, d1 := run(false)
	split, _ := run(true)
	if d1 != 2 {
		t.Errorf("one row asked for on a software device: %d dispatches, want the split's 2", d1)
	}
	for i := range split {
		if forced[i] != split[i] {
			t.Fatalf("output %d: %g, split %g", i, forced[i], split[i])
		}
	}
}
