package tests

import (
	"fmt"
	"math/rand/v2"

	"github.com/tandem-ml/tandem/core"
)

// The copy and rows family beyond the base table: DUP/CONT/CPY between every supported type pair,
// permuted sources, strided destination views, copies between different shapes (ggml's dup
// order), quantization on write checked for identical blocks, GET_ROWS of every type from strided
// sources with 4-D batches, SET_ROWS into every destination type with i32/i64 indices broadcast
// over dims 2 and 3 and repeated indices.

// rowsExact demands identical results: same-type copies, and quantization on write (the Vulkan
// quantizer reproduces core/quant's blocks bit for bit, so the dequantized values are equal).
const rowsExact = 1e-300

func init() {
	extraCases = append(extraCases, copyCases)
}

// copyInit fills index tensors (named "idx", I32 or I64) with rows in [0, rows), other I32 inputs
// with integers in [-1000, 1000), f32 inputs named "big" uniformly in [-3e4, 3e4) and everything
// else uniformly in [-1, 1).
func copyInit(rows int) func(t *core.Tensor, r *rand.Rand) error {
	return func(t *core.Tensor, r *rand.Rand) error {
		switch t.Type {
		case core.TypeI32:
			if t.Name == "idx" {
				return Uniform(t, r, 0, float32(rows))
			}
			return Uniform(t, r, -1000, 1000)
		case core.TypeI64:
			raw := make([]byte, 8*t.NElements())
			for i := range t.NElements() {
				v := uint64(r.IntN(rows))
				for k := range int64(8) {
					raw[8*i+k] = byte(v >> (8 * k))
				}
			}
			return core.TensorSet(t, raw, 0)
		}
		if t.Name == "big" {
			return Uniform(t, r, -3e4, 3e4)
		}
		return Uniform(t, r, -1, 1)
	}
}

func copyCases() []Case {
	var cs []Case
	f32 := core.TypeF32
	add := func(name string, limit float64, build func(*core.Context) *core.Tensor) {
		cs = append(cs, Case{Name: "copy/" + name, Build: build, MaxNMSE: limit, Init: copyInit(0)})
	}
	types := []core.Type{core.TypeF32, core.TypeF16, core.TypeBF16, core.TypeQ4_0, core.TypeQ4_1, core.TypeQ8_0}

	// Every pair ggml allows, from a permuted source (blocks stay whole: dims 1..3 permuted).
	for _, from := range types {
		for _, to := range types {
			if from.IsQuantized() && to.IsQuantized() && from != to {
				continue
			}
			from, to := from, to
			// Conversions are exact on both sides (integer f16/bf16 rounding, exact
			// dequantization, the reference quantizer), so every pair must match exactly.
			add(fmt.Sprintf("CPY(%v->%v,permuted)", from, to), rowsExact, func(c *core.Context) *core.Tensor {
				a := c.Permute(c.NewTensor(from, 64, 3, 5, 2), 0, 2, 1, 3)
				return c.Cpy(a, c.NewTensor(to, 64, 5, 3, 2))
			})
		}
	}
	for _, typ := range types {
		typ := typ
		add(fmt.Sprintf("CONT(%v,permuted)", typ), rowsExact, func(c *core.Context) *core.Tensor {
			return c.Cont(c.Permute(c.NewTensor(typ, 32, 5, 3, 2), 0, 3, 1, 2))
		})
		add(fmt.Sprintf("DUP(%v)", typ), rowsExact, func(c *core.Context) *core.Tensor {
			return c.Dup(c.NewTensor(typ, 96, 3, 2))
		})
		// Different shapes with equal element count: element k goes to element k.
		add(fmt.Sprintf("CPY(%v,reshape)", typ), rowsExact, func(c *core.Context) *core.Tensor {
			return c.Cpy(c.NewTensor(typ, 64, 6, 2), c.NewTensor(typ, 32, 4, 3, 2))
		})
	}
	add("CONT(f32,transposed,new shape)", rowsExact, func(c *core.Context) *core.Tensor {
		return c.ContShape(c.Transpose(c.NewTensor(f32, 7, 10)), 5, 2, 7)
	})
	add("CPY(f16,transposed)", rowsExact, func(c *core.Context) *core.Tensor {
		return c.Cpy(c.Transpose(c.NewTensor(core.TypeF16, 9, 13)), c.NewTensor(core.TypeF16, 13, 9))
	})
	// Quantization from transposed and reshaped sources (element order of dup).
	for _, to := range []core.Type{core.TypeQ4_0, core.TypeQ4_1, core.TypeQ8_0} {
		to := to
		add(fmt.Sprintf("CPY(f32->%v,transposed)", to), rowsExact, func(c *core.Context) *core.Tensor {
			return c.Cpy(c.Transpose(c.NewTensor(f32, 5, 64)), c.NewTensor(to, 64, 5))
		})
		add(fmt.Sprintf("CPY(f32->%v,reshape)", to), rowsExact, func(c *core.Context) *core.Tensor {
			return c.Cpy(c.NewTensor(f32, 48, 4, 2), c.NewTensor(to, 128, 3))
		})
		add(fmt.Sprintf("CAST(f16->%v)", to), rowsExact, func(c *core.Context) *core.Tensor {
			return c.Cast(c.NewTensor(core.TypeF16, 96, 5), to)
		})
	}
	// Strided destination views: the rows between are left alone.
	add("CPY(f32->f32 view)", rowsExact, func(c *core.Context) *core.Tensor {
		d := c.NewTensor(f32, 11, 8, 3)
		return c.Cpy(c.NewTensor(f32, 7, 5, 3), c.View3D(d, 7, 5, 3, d.Nb[1], d.Nb[2], 2*d.Nb[1]+3*4))
	})
	add("CPY(f32->f16 view,permuted src)", nmseDefault, func(c *core.Context) *core.Tensor {
		d := c.NewTensor(core.TypeF16, 10, 9, 2)
		a := c.Permute(c.NewTensor(f32, 5, 6, 2), 1, 0, 2, 3)
		return c.Cpy(a, c.View3D(d, 6, 5, 2, d.Nb[1], d.Nb[2], 2))
	})
	add("CPY(f32->q8_0 view)", rowsExact, func(c *core.Context) *core.Tensor {
		d := c.NewTensor(core.TypeQ8_0, 64, 9)
		return c.Cpy(c.NewTensor(f32, 64, 4), c.View2D(d, 64, 4, 2*d.Nb[1], d.Nb[1]))
	})
	add("CPY(f32->f32 view,transposed dst)", rowsExact, func(c *core.Context) *core.Tensor {
		d := c.NewTensor(f32, 6, 9)
		return c.Cpy(c.NewTensor(f32, 9, 6), c.Transpose(d))
	})
	// Integer conversions.
	add("CAST(i32->f32)", rowsExact, func(c *core.Context) *core.Tensor {
		return c.Cast(c.NewTensor(core.TypeI32, 13, 5), f32)
	})
	add("CAST(f32->i32)", rowsExact, func(c *core.Context) *core.Tensor {
		return c.Cast(c.NewTensor(f32, 13, 5).SetName("big"), core.TypeI32)
	})
	add("CONT(i32,permuted)", rowsExact, func(c *core.Context) *core.Tensor {
		return c.Cont(c.Permute(c.NewTensor(core.TypeI32, 13, 5, 2), 1, 2, 0, 3))
	})

	// GET_ROWS: every type, 4-D batches, strided (viewed) sources.
	rowsCase := func(name string, limit float64, rows int, build func(*core.Context) *core.Tensor) {
		cs = append(cs, Case{Name: "rows/" + name, Build: build, MaxNMSE: limit, Init: copyInit(rows)})
	}
	idx := func(c *core.Context, typ core.Type, ne ...int64) *core.Tensor {
		return c.NewTensor(typ, ne...).SetName("idx")
	}
	for _, typ := range append(types, core.TypeI32) {
		typ := typ
		rowsCase(fmt.Sprintf("GET_ROWS(%v,4d)", typ), rowsExact, 10, func(c *core.Context) *core.Tensor {
			return c.GetRows(c.NewTensor(typ, 64, 10, 3, 2), idx(c, core.TypeI32, 9, 3, 2))
		})
		rowsCase(fmt.Sprintf("GET_ROWS(%v,strided src)", typ), rowsExact, 6, func(c *core.Context) *core.Tensor {
			a := c.NewTensor(typ, 96, 13, 2)
			v := c.View3D(a, 64, 6, 2, 2*a.Nb[1], a.Nb[2], a.Nb[1]+typ.RowSize(32))
			return c.GetRows(v, idx(c, core.TypeI32, 5, 2))
		})
	}
	rowsCase("GET_ROWS(f32,long rows)", rowsExact, 4, func(c *core.Context) *core.Tensor {
		return c.GetRows(c.NewTensor(f32, 3000, 4), idx(c, core.TypeI32, 6))
	})

	// SET_ROWS: every destination type, i32 and i64 indices, broadcast over dims 2 and 3.
	for _, typ := range types {
		for _, it := range []core.Type{core.TypeI32, core.TypeI64} {
			typ, it := typ, it
			rowsCase(fmt.Sprintf("SET_ROWS(%v,%v,broadcast)", typ, it), rowsExact, 10, func(c *core.Context) *core.Tensor {
				return c.SetRows(c.NewTensor(typ, 64, 10, 3, 2), c.NewTensor(f32, 64, 7, 3, 2), idx(c, it, 7, 1, 2))
			})
		}
	}
	// Many source rows onto few dst rows: repeated indices, the last source row wins.
	rowsCase("SET_ROWS(f32,repeated indices)", rowsExact, 3, func(c *core.Context) *core.Tensor {
		return c.SetRows(c.NewTensor(f32, 33, 3, 2), c.NewTensor(f32, 33, 150, 2), idx(c, core.TypeI32, 150, 2))
	})
	rowsCase("SET_ROWS(q8_0,repeated indices)", rowsExact, 2, func(c *core.Context) *core.Tensor {
		return c.SetRows(c.NewTensor(core.TypeQ8_0, 64, 2), c.NewTensor(f32, 64, 70), idx(c, core.TypeI32, 70))
	})
	// f16 source rows (ggml converts them to f32 and then to the destination; f16 to f16 copies).
	for _, typ := range types {
		typ := typ
		rowsCase(fmt.Sprintf("SET_ROWS(f16 src->%v,i64,broadcast)", typ), rowsExact, 10, func(c *core.Context) *core.Tensor {
			return c.SetRows(c.NewTensor(typ, 64, 10, 3, 2), c.NewTensor(core.TypeF16, 64, 7, 3, 2), idx(c, core.TypeI64, 7, 1, 2))
		})
	}
	// Nothing to write: an empty destination view with no source rows, and no source rows at all.
	rowsCase("SET_ROWS(f16 src,empty view)", rowsExact, 1, func(c *core.Context) *core.Tensor {
		a := c.NewTensor(f32, 16, 5, 2)
		v := c.View3D(a, 16, 0, 2, a.Nb[1], a.Nb[2], a.Nb[1])
		return c.SetRows(v, c.NewTensor(core.TypeF16, 16, 0, 2), idx(c, core.TypeI64, 0, 2))
	})
	rowsCase("SET_ROWS(f32,no source rows)", rowsExact, 1, func(c *core.Context) *core.Tensor {
		return c.SetRows(c.NewTensor(core.TypeQ8_0, 64, 5, 2), c.NewTensor(f32, 64, 0, 2), idx(c, core.TypeI32, 0, 1))
	})
	rowsCase("SET_ROWS(f16,strided src rows)", nmseDefault, 9, func(c *core.Context) *core.Tensor {
		b := c.Permute(c.NewTensor(f32, 40, 3, 4), 0, 2, 1, 3) // [40, 4, 3]
		return c.SetRows(c.NewTensor(core.TypeF16, 40, 9, 3), b, idx(c, core.TypeI32, 4, 3))
	})
	return cs
}
