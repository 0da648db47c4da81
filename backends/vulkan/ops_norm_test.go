//go:build cgo && !novulkan

package vulkan

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// TestRowOpsInPlace runs NORM, RMS_NORM, SOFT_MAX, DIAG_MASK_INF and ROPE with dst
// sharing src0's memory (as an allocator reusing the parent's memory does) and checks
// the result equals the out-of-place result bit for bit.
func TestRowOpsInPlace(t *testing.T) {
	be := newBackend(t)
	ops := map[string]func(c *core.Context, x, pos, mask *core.Tensor) *core.Tensor{
		"NORM":          func(c *core.Context, x, _, _ *core.Tensor) *core.Tensor { return c.Norm(x, 1e-5) },
		"RMS_NORM":      func(c *core.Context, x, _, _ *core.Tensor) *core.Tensor { return c.RMSNorm(x, 1e-6) },
		"SOFT_MAX":      func(c *core.Context, x, _, m *core.Tensor) *core.Tensor { return c.SoftMaxExt(x, m, 0.5, 4) },
		"DIAG_MASK_INF": func(c *core.Context, x, _, _ *core.Tensor) *core.Tensor { return c.DiagMaskInf(x, 1) },
		"ROPE": func(c *core.Context, x, pos, _ *core.Tensor) *core.Tensor {
			return c.Rope(x, pos, 64, core.RopeNeox)
		},
		"ROPE(f16)": nil,
	}
	for name, op := range ops {
		typ := core.TypeF32
		if name == "ROPE(f16)" {
			if !be.dev.info.Features.StorageBuffer16BitAccess {
				continue
			}
			typ = core.TypeF16
			op = func(c *core.Context, x, pos, _ *core.Tensor) *core.Tensor { return c.Rope(x, pos, 32, core.RopeNormal) }
		}
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		x := ctx.NewTensor(typ, 300, 5, 4)
		pos := ctx.NewTensor1D(core.TypeI32, 4)
		mask := ctx.NewTensor(core.TypeF32, 300, 5)
		ref := op(ctx, x, pos, mask)
		inp := op(ctx, x, pos, mask)
		if err := ctx.Err(); err != nil {
			t.Fatal(err)
		}
		bt := be.DefaultBufferType()
		buf, err := bt.Alloc(4 * (x.NBytes() + mask.NBytes() + 1024))
		if err != nil {
			t.Fatal(err)
		}
		defer buf.Free()
		off := int64(0)
		for _, tt := range []*core.Tensor{x, pos, mask, ref} {
			off = core.AlignUp(off, bt.Alignment())
			if err := core.TensorAlloc(buf, tt, off); err != nil {
				t.Fatal(err)
			}
			off += bt.AllocSize(tt)
		}
		if err := core.TensorAlloc(buf, inp, x.Offset); err != nil { // in place
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		randomize(t, r, x, -2, 2)
		randomize(t, r, mask, -1, 1)
		if err := core.SetInt32s(pos, []int32{0, 7, 150, 3}); err != nil {
			t.Fatal(err)
		}
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(ref)
		g.BuildForwardExpand(inp)
		if err := be.GraphCompute(g); err != nil {
			t.Fatal(err)
		}
		want := make([]byte, ref.NBytes())
		got := make([]byte, inp.NBytes())
		if err := core.TensorGet(ref, want, 0); err != nil {
			t.Fatal(err)
		}
		if err := core.TensorGet(inp, got, 0); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: in-place result differs from out-of-place", name)
		}
	}
}
