package tests

import (
	"fmt"
	"math/rand/v2"

	"github.com/tandem-ml/tandem/core"
)

// Writes into Q2_K and Q3_K (ggml's quantize_row_q2_K_ref and quantize_row_q3_K_ref, core/quant's
// QuantizeRowQ2_K and QuantizeRowQ3_K; the GPU backends quantize with the same arithmetic in
// shaders/rows.glsl): CPY from f32, f16 (permuted) and bf16, SET_ROWS with i32 and i64 indices
// broadcast over dims 2 and 3, and the same-type copy of permuted rows, on super-blocks made to
// reach the quantizers' branches and rounding edges (k23Init), compared exactly (rowsExact).

func init() {
	extraCases = append(extraCases, k23Cases)
}

// k23Types are the types of this family.
var k23Types = []core.Type{core.TypeQ2_K, core.TypeQ3_K}

func k23Cases() []Case {
	f32, f16, bf16 := core.TypeF32, core.TypeF16, core.TypeBF16
	var cs []Case
	for _, typ := range k23Types {
		add := func(name string, init func(*core.Tensor, *rand.Rand) error, build func(c *core.Context) *core.Tensor) {
			cs = append(cs, Case{Name: "k23/" + name, MaxNMSE: rowsExact, Init: init, Build: build})
		}
		add(fmt.Sprintf("CPY(f32->%v,edges)", typ), k23Init(0), func(c *core.Context) *core.Tensor {
			return c.Cpy(c.NewTensor(f32, 512, 12).SetName("k23"), c.NewTensor(typ, 512, 12))
		})
		add(fmt.Sprintf("CPY(f16->%v,permuted,edges)", typ), k23Init(0), func(c *core.Context) *core.Tensor {
			a := c.Permute(c.NewTensor(f16, 256, 4, 3, 1).SetName("k23"), 0, 2, 1, 3)
			return c.Cpy(a, c.NewTensor(typ, 256, 3, 4, 1))
		})
		add(fmt.Sprintf("CPY(bf16->%v,edges)", typ), k23Init(0), func(c *core.Context) *core.Tensor {
			return c.Cpy(c.NewTensor(bf16, 768, 4).SetName("k23"), c.NewTensor(typ, 768, 4))
		})
		add(fmt.Sprintf("CPY(f32->%v,uniform)", typ), copyInit(0), func(c *core.Context) *core.Tensor {
			return c.Cpy(c.NewTensor(f32, 256, 7, 2), c.NewTensor(typ, 256, 7, 2))
		})
		for _, it := range []core.Type{core.TypeI32, core.TypeI64} {
			add(fmt.Sprintf("SET_ROWS(%v,%v,broadcast,edges)", typ, it), k23Init(6), func(c *core.Context) *core.Tensor {
				return c.SetRows(c.NewTensor(typ, 512, 6, 3, 2), c.NewTensor(f32, 512, 4, 3, 2).SetName("k23"),
					c.NewTensor(it, 4, 1, 2).SetName("idx"))
			})
		}
		add(fmt.Sprintf("CPY(%v->%v,permuted)", typ, typ), copyInit(0), func(c *core.Context) *core.Tensor {
			a := c.Permute(c.NewTensor(typ, 512, 3, 5, 1), 0, 2, 1, 3)
			return c.Cpy(a, c.NewTensor(typ, 512, 5, 3, 1))
		})
	}
	return cs
}

// k23Init fills the tensor named "k23" super-block by super-block (256 values) with one of 12
// kinds in turn: uniform, roughly normal, all positive (every sub-block's minimum clamped to 0),
// all negative, constant sub-blocks (vmax == vmin), sub-blocks of zeros, of magnitudes under
// 1e-15 (Q3_K's zero codes) and 1e-6 beside ordinary ones, one dominant sub-block (the others'
// stored scales round to 0 and keep the search's codes), large magnitudes (3e4), multiples of
// 1/8 (rounding ties), five levels (the search's candidates tie in error) and outliers; every
// other tensor as copyInit(rows).
func k23Init(rows int) func(t *core.Tensor, r *rand.Rand) error {
	return func(t *core.Tensor, r *rand.Rand) error {
		if t.Name != "k23" {
			return copyInit(rows)(t, r)
		}
		v := make([]float32, t.NElements())
		for b := range len(v) / 256 {
			x := v[256*b : 256*(b+1)]
			u := func(s float32) float32 { return (2*r.Float32() - 1) * s }
			switch b % 12 {
			case 0:
				for i := range x {
					x[i] = u(1)
				}
			case 1:
				for i := range x {
					x[i] = float32(r.NormFloat64())
				}
			case 2:
				for i := range x {
					x[i] = 0.5 + r.Float32()
				}
			case 3:
				for i := range x {
					x[i] = -0.25 - 3*r.Float32()
				}
			case 4:
				for j := range 16 {
					c := float32(r.IntN(7)-3) * 0.37
					for i := range 16 {
						x[16*j+i] = c
					}
				}
			case 5:
				for i := range x {
					x[i] = []float32{0, u(1e-16), u(1e-6), u(1)}[(i/16)%4]
				}
			case 6:
				for i := range x {
					x[i] = u(1e-3)
				}
				for i := 80; i < 96; i++ {
					x[i] = u(100)
				}
			case 7:
				for i := range x {
					x[i] = u(3e4)
				}
			case 8:
				for i := range x {
					x[i] = float32(r.IntN(33)-16) / 8
				}
			case 9:
				for i := range x {
					x[i] = []float32{-1, -0.5, 0, 0.5, 1}[r.IntN(5)]
				}
			case 10:
				for i := range x {
					x[i] = u(0.1)
				}
				for range 6 {
					x[r.IntN(256)] = u(10)
				}
			case 11:
				for i := range x {
					x[i] = u(1e-6)
				}
			}
		}
		return core.SetFloat32s(t, v)
	}
}
