//go:build cgo && !novulkan

package vulkan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// allTypes lists every type core knows (ids 0..63).
func allTypes() []core.Type {
	var out []core.Type
	for id := core.Type(0); id < 64; id++ {
		if id.Valid() {
			out = append(out, id)
		}
	}
	return out
}

// Every op × type the backend claims to support has its shader variant: the node computes. A
// variant missing from the shader build would show here as a pipeline error, not at a user's run.
// The nodes are the type-dependent ones (weights of MUL_MAT as mat-vec and as tiles, rows read
// by GET_ROWS, both sides of CPY, rows written by SET_ROWS, elementwise and norm inputs), built by
// core's constructors with small shapes.
func TestEverySupportedVariantComputes(t *testing.T) {
	be := newBackend(t)
	type build func(c *core.Context, a, b core.Type) *core.Tensor
	rowLen := func(tp core.Type) int64 { return max(tp.BlockSize(), 32) * 2 }
	builds := map[string]build{
		"MUL_MAT mat-vec": func(c *core.Context, a, _ core.Type) *core.Tensor {
			k := rowLen(a)
			return c.MulMat(c.NewTensor2D(a, k, 5), c.NewTensor2D(core.TypeF32, k, 1))
		},
		"MUL_MAT tiles": func(c *core.Context, a, _ core.Type) *core.Tensor {
			k := rowLen(a)
			return c.MulMat(c.NewTensor2D(a, k, 33), c.NewTensor2D(core.TypeF32, k, 17))
		},
		"GET_ROWS": func(c *core.Context, a, _ core.Type) *core.Tensor {
			return c.GetRows(c.NewTensor2D(a, rowLen(a), 4), c.NewTensor1D(core.TypeI32, 3))
		},
		"CPY": func(c *core.Context, a, b core.Type) *core.Tensor {
			n := max(rowLen(a), rowLen(b))
			return c.Cpy(c.NewTensor2D(a, n, 3), c.NewTensor2D(b, n, 3))
		},
		"SET_ROWS": func(c *core.Context, a, _ core.Type) *core.Tensor {
			n := rowLen(a)
			return c.SetRows(c.NewTensor2D(a, n, 4), c.NewTensor2D(core.TypeF32, n, 2), c.NewTensor1D(core.TypeI64, 2))
		},
		"ADD": func(c *core.Context, a, _ core.Type) *core.Tensor {
			return c.Add(c.NewTensor2D(a, 64, 3), c.NewTensor2D(a, 64, 3))
		},
		"SILU": func(c *core.Context, a, _ core.Type) *core.Tensor { return c.Silu(c.NewTensor2D(a, 64, 3)) },
		"RMS_NORM": func(c *core.Context, a, _ core.Type) *core.Tensor {
			return c.RMSNorm(c.NewTensor2D(a, 64, 3), 1e-6)
		},
		"LIGHTNING_INDEXER": func(c *core.Context, a, _ core.Type) *core.Tensor { // keys of a
			n := rowLen(a)
			return c.LightningIndexer(c.NewTensor4D(core.TypeF32, n, 2, 3, 1), c.NewTensor4D(a, n, 1, 5, 1),
				c.NewTensor4D(core.TypeF32, 2, 3, 1, 1), c.NewTensor4D(core.TypeF16, 5, 3, 1, 1))
		},
		"FLASH_ATTN_EXT": func(c *core.Context, a, b core.Type) *core.Tensor { // k of a, v of b
			dk, dv := rowLen(a), rowLen(b)
			q := c.NewTensor4D(core.TypeF32, dk, 2, 2, 1)
			k, v := c.NewTensor4D(a, dk, 5, 1, 1), c.NewTensor4D(b, dv, 5, 1, 1)
			return c.FlashAttnExt(q, k, v, c.NewTensor2D(core.TypeF16, 5, 2), 1, 0, 0)
		},
		"FLASH_ATTN_EXT split": func(c *core.Context, a, b core.Type) *core.Tensor { // keys split over workgroups
			dk, dv := rowLen(a), rowLen(b)
			q := c.NewTensor4D(core.TypeF32, dk, 1, 2, 1)
			k, v := c.NewTensor4D(a, dk, 300, 1, 1), c.NewTensor4D(b, dv, 300, 1, 1)
			return c.FlashAttnExt(q, k, v, c.NewTensor2D(core.TypeF16, 300, 1), 1, 0, 0)
		},
	}
	types := allTypes()
	supported := 0
	perBuild := map[string]int{}
	for name, bld := range builds {
		for _, a := range types {
			seconds := []core.Type{core.TypeF32}
			if name == "CPY" || strings.HasPrefix(name, "FLASH_ATTN_EXT") {
				seconds = types
			}
			for _, b := range seconds {
				ctx := core.NewContext(core.ContextParams{NoAlloc: true})
				out := bld(ctx, a, b)
				if ctx.Err() != nil || !be.Device().SupportsOp(out) {
					continue // core or the device says no: nothing to check
				}
				supported++
				perBuild[name]++
				label := fmt.Sprintf("%s %v", name, a)
				if name == "CPY" || strings.HasPrefix(name, "FLASH_ATTN_EXT") {
					label += fmt.Sprintf("→%v", b)
				}
				allocCtx(t, ctx, be.DefaultBufferType())
				for _, x := range ctx.Tensors() {
					if x.ViewSrc != nil || x.Op != core.OpNone {
						continue
					}
					// zeros: valid indices, finite scales and values in every type
					if err := core.TensorMemset(x, 0, 0, x.NBytes()); err != nil {
						t.Fatal(err)
					}
				}
				g := core.NewGraph(16)
				g.BuildForwardExpand(out)
				if err := be.GraphCompute(g); err != nil {
					t.Errorf("%s is supported but does not compute: %v", label, err)
				}
			}
		}
	}
	// FLASH_ATTN_EXT's K/V pairs (gpuops' faPair): the 9 of f32, f16 and q8_0, bf16, q4_0, q4_1,
	// q5_0, q5_1, iq4_nl, q1_0 and q2_0 with themselves, 10 mixed pairs of ggml's tests, and the 15
	// types of kquants.glsl's loaders (q2_K..q6_K, iq4_xs, mxfp4, nvfp4, the IQ3/IQ2/IQ1 types)
	// with themselves (f32 alone on a device without 16-bit storage).
	for _, name := range []string{"FLASH_ATTN_EXT", "FLASH_ATTN_EXT split"} {
		if n := perBuild[name]; n != 42 && n != 1 {
			t.Errorf("%s: %d K/V type pairs supported, want 42", name, n)
		}
	}
	// LIGHTNING_INDEXER's 23 key types (gpuops' lightningKTypes; none on a device without 16-bit
	// storage: the mask is f16).
	if n := perBuild["LIGHTNING_INDEXER"]; n != 23 && n != 0 {
		t.Errorf("LIGHTNING_INDEXER: %d key types supported, want 23", n)
	}
	if supported < 40 {
		t.Errorf("only %d op × type nodes supported: the sweep lost its reach", supported)
	}
	t.Logf("%d supported op × type nodes computed", supported)
}
