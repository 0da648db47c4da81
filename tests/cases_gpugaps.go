package tests

import (
	"fmt"
	"math/rand/v2"

	"github.com/tandem-ml/tandem/core"
)

// Type combinations and sizes the GPU backends once lacked (issue 22): MUL_MAT with bf16 weights
// and with f16 weights times f16 activations (mat-vec, tiled, unaligned K, broadcast, permuted
// activations); ADD, SUB, MUL and DIV over f16 and bf16 operands (src1 of the same type or f32,
// and f32 src0 with an f16 src1), broadcast and permuted; CPY (f32, f16 and bf16 sources, permuted)
// and SET_ROWS (i32 and i64 indices, broadcast) into Q5_0, Q5_1, IQ4_NL, Q4_K, Q5_K, Q6_K and
// IQ4_XS, quantized on the device as core/quant's reference quantizers; ARGSORT of rows longer than a workgroup's shared
// memory holds (the multi-pass sort), with ties, signed zeros, infinities and NaNs; CONCAT of I64
// (dense and permuted) and of quantized blocks of 4- and 2-byte multiples along every dimension.
func init() {
	extraCases = append(extraCases, gpuGapCases)
}

func gpuGapCases() []Case {
	var cs []Case
	add := func(name string, limit float64, build func(*core.Context) *core.Tensor) {
		cs = append(cs, Case{Name: name, Build: build, MaxNMSE: limit})
	}
	f32, f16, bf16 := core.TypeF32, core.TypeF16, core.TypeBF16
	for _, ab := range [][2]core.Type{{bf16, f32}, {f16, f16}} {
		a, b := ab[0], ab[1]
		for _, n := range []int64{1, 3, 33} {
			n := n
			add(fmt.Sprintf("MUL_MAT(%v x %v,m=17,n=%d,k=64)", a, b, n), nmseMatMul, func(c *core.Context) *core.Tensor {
				return c.MulMat(c.NewTensor(a, 64, 17), c.NewTensor(b, 64, n))
			})
		}
		add(fmt.Sprintf("MUL_MAT(%v x %v,m=33,n=17,k=37)", a, b), nmseMatMul, func(c *core.Context) *core.Tensor {
			return c.MulMat(c.NewTensor(a, 37, 33), c.NewTensor(b, 37, 17))
		})
		add(fmt.Sprintf("MUL_MAT(%v x %v,k=37,n=1)", a, b), nmseMatMul, func(c *core.Context) *core.Tensor {
			return c.MulMat(c.NewTensor(a, 37, 9), c.NewTensor(b, 37, 1))
		})
		add(fmt.Sprintf("MUL_MAT(%v x %v,broadcast 2+3,n=20)", a, b), nmseMatMul, func(c *core.Context) *core.Tensor {
			return c.MulMat(c.NewTensor(a, 64, 33, 2, 1), c.NewTensor(b, 64, 20, 6, 2))
		})
		add(fmt.Sprintf("MUL_MAT(%v x %v,permuted b,n=21)", a, b), nmseMatMul, func(c *core.Context) *core.Tensor {
			return c.MulMat(c.NewTensor(a, 64, 9, 3), c.Permute(c.NewTensor(b, 64, 3, 21), 0, 2, 1, 3))
		})
	}
	for _, op := range []string{"ADD", "SUB", "MUL", "DIV"} {
		for _, ab := range [][2]core.Type{{f16, f16}, {bf16, bf16}, {f16, f32}, {bf16, f32}, {f32, f16}} {
			op, a, b := op, ab[0], ab[1]
			cs = append(cs, Case{Name: fmt.Sprintf("%s(%v,%v,broadcast)", op, a, b), Init: binaryInit(op),
				Build: func(c *core.Context) *core.Tensor {
					return binary(c, op, c.NewTensor(a, 5, 7, 3, 2), c.NewTensor(b, 5, 1, 3, 1))
				}})
			cs = append(cs, Case{Name: fmt.Sprintf("%s(%v,%v,permuted a)", op, a, b), Init: binaryInit(op),
				Build: func(c *core.Context) *core.Tensor {
					x := c.Permute(c.NewTensor(a, 7, 5, 3, 2), 1, 0, 2, 3)
					return binary(c, op, x, c.NewTensor(b, 5, 7, 3, 2))
				}})
		}
	}
	for _, q := range []core.Type{core.TypeQ5_0, core.TypeQ5_1, core.TypeIQ4_NL} {
		q := q
		for _, from := range []core.Type{f32, f16, bf16} {
			from := from
			cs = append(cs, Case{Name: fmt.Sprintf("CPY(%v->%v,permuted)", from, q), MaxNMSE: rowsExact, Init: copyInit(0),
				Build: func(c *core.Context) *core.Tensor {
					a := c.Permute(c.NewTensor(from, 64, 3, 5, 1), 0, 2, 1, 3)
					return c.Cpy(a, c.NewTensor(q, 64, 5, 3, 1))
				}})
		}
		cs = append(cs, Case{Name: fmt.Sprintf("CPY(f32->%v,reshape)", q), MaxNMSE: rowsExact, Init: copyInit(0),
			Build: func(c *core.Context) *core.Tensor {
				return c.Cpy(c.NewTensor(f32, 48, 4, 2), c.NewTensor(q, 128, 3))
			}})
		for _, it := range []core.Type{core.TypeI32, core.TypeI64} {
			it := it
			cs = append(cs, Case{Name: fmt.Sprintf("SET_ROWS(%v,%v,broadcast)", q, it), MaxNMSE: rowsExact, Init: copyInit(10),
				Build: func(c *core.Context) *core.Tensor {
					return c.SetRows(c.NewTensor(q, 64, 10, 3, 2), c.NewTensor(f32, 64, 7, 3, 2), c.NewTensor(it, 7, 1, 2).SetName("idx"))
				}})
		}
	}
	// K-quants and IQ4_XS: every source type and index type for Q4_K and Q6_K; f32 sources for
	// Q5_K (Q4_K's search with 5-bit codes) and IQ4_XS, whose storers lavapipe compiles slowly
	// (a minute or more per variant on a loaded machine): the other variants share their code.
	kq := []struct {
		t    core.Type
		all  bool
		rows bool
	}{{core.TypeQ4_K, true, true}, {core.TypeQ5_K, false, false}, {core.TypeQ6_K, true, true}, {core.TypeIQ4_XS, false, true}}
	for _, q := range kq {
		q := q
		froms := []core.Type{f32}
		if q.all {
			froms = append(froms, f16, bf16)
		}
		for _, from := range froms {
			from := from
			cs = append(cs, Case{Name: fmt.Sprintf("CPY(%v->%v,permuted)", from, q.t), MaxNMSE: rowsExact, Init: copyInit(0),
				Build: func(c *core.Context) *core.Tensor {
					a := c.Permute(c.NewTensor(from, 256, 3, 2, 1), 0, 2, 1, 3)
					return c.Cpy(a, c.NewTensor(q.t, 256, 2, 3, 1))
				}})
		}
		cs = append(cs, Case{Name: fmt.Sprintf("CPY(f32->%v,reshape)", q.t), MaxNMSE: rowsExact, Init: copyInit(0),
			Build: func(c *core.Context) *core.Tensor {
				return c.Cpy(c.NewTensor(f32, 96, 8, 2), c.NewTensor(q.t, 512, 3))
			}})
		cs = append(cs, Case{Name: fmt.Sprintf("CPY(f32->%v,zero super-block)", q.t), MaxNMSE: rowsExact, Init: copyInit(0),
			Build: func(c *core.Context) *core.Tensor {
				z := c.Scale(c.NewTensor(f32, 256, 1), 0)
				return c.Cpy(c.Concat(z, c.NewTensor(f32, 256, 2), 1), c.NewTensor(q.t, 256, 3))
			}})
		if !q.rows {
			continue
		}
		for _, it := range []core.Type{core.TypeI32, core.TypeI64} {
			it := it
			cs = append(cs, Case{Name: fmt.Sprintf("SET_ROWS(%v,%v,broadcast)", q.t, it), MaxNMSE: rowsExact, Init: copyInit(6),
				Build: func(c *core.Context) *core.Tensor {
					return c.SetRows(c.NewTensor(q.t, 512, 6, 2, 2), c.NewTensor(f32, 512, 3, 2, 2), c.NewTensor(it, 3, 1, 2).SetName("idx"))
				}})
		}
		if q.all {
			cs = append(cs, Case{Name: fmt.Sprintf("SET_ROWS(%v,f16 rows)", q.t), MaxNMSE: rowsExact, Init: copyInit(4),
				Build: func(c *core.Context) *core.Tensor {
					return c.SetRows(c.NewTensor(q.t, 256, 4), c.NewTensor(f16, 256, 2), c.NewTensor(core.TypeI32, 2).SetName("idx"))
				}})
		}
	}
	for _, order := range []core.SortOrder{core.SortAsc, core.SortDesc} {
		order := order
		cs = append(cs, Case{Name: fmt.Sprintf("ARGSORT(%d,ne0=10000,ties,long row)", order), MaxNMSE: nmseExact, Init: eltDiscrete(true),
			Build: func(c *core.Context) *core.Tensor {
				return c.Argsort(c.NewTensor(f32, 10000, 2), order)
			}})
	}
	i64 := core.TypeI64
	concat := func(name string, build func(*core.Context) *core.Tensor) {
		cs = append(cs, Case{Name: "CONCAT(" + name + ")", MaxNMSE: nmseExact, Init: concatI64Init, Build: build})
	}
	for dim := 0; dim < 4; dim++ {
		dim := dim
		concat(fmt.Sprintf("i64,dim=%d", dim), func(c *core.Context) *core.Tensor {
			ne := []int64{5, 3, 2, 2}
			ne[dim] = 4
			return c.Concat(c.NewTensor(i64, 5, 3, 2, 2), c.NewTensor(i64, ne...), dim)
		})
	}
	concat("i64,permuted,dim=1", func(c *core.Context) *core.Tensor {
		a := c.Permute(c.NewTensor(i64, 3, 4, 2), 1, 0, 2, 3) // ne = 4, 3, 2
		return c.Concat(a, c.NewTensor(i64, 4, 5, 2), 1)
	})
	concat("i64,dim=0,empty b", func(c *core.Context) *core.Tensor {
		return c.Concat(c.NewTensor(i64, 5, 3), c.NewTensor(i64, 0, 3), 0)
	})
	for _, q := range []struct {
		t   core.Type
		dim int
	}{
		{core.TypeQ4_1, 0}, {core.TypeQ5_0, 3}, {core.TypeQ5_1, 1}, {core.TypeQ8_0, 0}, {core.TypeIQ4_NL, 2},
		{core.TypeQ2_K, 1}, {core.TypeQ3_K, 0}, {core.TypeQ5_K, 3}, {core.TypeQ6_K, 0}, {core.TypeIQ4_XS, 1},
	} {
		q := q
		concat(fmt.Sprintf("%v,dim=%d", q.t, q.dim), func(c *core.Context) *core.Tensor {
			bs := q.t.BlockSize()
			ne := []int64{2 * bs, 3, 2, 2}
			a := c.NewTensor(q.t, ne...)
			ne[q.dim] = []int64{bs, 2, 3, 1}[q.dim]
			return c.Concat(a, c.NewTensor(q.t, ne...), q.dim)
		})
	}
	concat("q5_0,rows of a view,dim=0", func(c *core.Context) *core.Tensor {
		a := c.NewTensor(core.TypeQ5_0, 96, 6, 2)
		v := c.View3D(a, 64, 3, 2, 2*a.Nb[1], a.Nb[2], a.Nb[0]) // every other row, from block 1
		return c.Concat(v, c.NewTensor(core.TypeQ5_0, 32, 3, 2), 0)
	})
	return cs
}

// concatI64Init fills I64 tensors with h·2^32 + l·2^20 (h in [-8, 8), l in [0, 4096)): both
// 32-bit words vary and every value is exact as a float32, which the harness compares.
func concatI64Init(t *core.Tensor, r *rand.Rand) error {
	if t.Type != core.TypeI64 {
		return Uniform(t, r, -1, 1)
	}
	raw := make([]byte, 8*t.NElements())
	for i := range t.NElements() {
		v := uint64((r.Int64N(16)-8)<<32 + r.Int64N(4096)<<20)
		for k := range int64(8) {
			raw[8*i+k] = byte(v >> (8 * k))
		}
	}
	return core.TensorSet(t, raw, 0)
}
