package tests

import (
	bin "encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tandem-ml/tandem/core"
)

// Numerics that must not differ by device (issue 10, class 8), compared with the harness's
// NaN/Inf-aware rule (the same NaN positions, infinities of the same sign, then NMSE on the finite
// rest):
//
//   - NORM/RMS_NORM of rows near 1e19 and 1e20, where Σx² overflows float32: the right values
//     (the CPU sums in float64; Vulkan prescales each row by its largest magnitude); rows of tiny
//     values; rows of one huge value (variance 0: 0, not NaN); rows holding ±Inf (0 for the finite elements, NaN for the infinite ones) or NaN (all
//     NaN).
//   - MUL_MAT with NaN activations: NaN propagates to every output of that column, for every
//     weight type (the CPU's Q8 activation quantizer keeps the NaN in the block scale).
//   - MUL_MAT with ±Inf activations and with weights holding ±Inf (f16 values, quantized block
//     scales): the IEEE result of float arithmetic on the dequantized weights — ±Inf, or NaN where
//     an infinity meets a zero or one of the opposite sign.

func init() {
	extraCases = append(extraCases, numericCases)
}

// bigInit fills tensors by name: "huge" uniform in [-lo·1e19.., ...] (scale given), "tiny" in
// ±1e-20, "inf" like uniform but with ±Inf at fixed places, "nan" with NaN at fixed places.
func numericInit(scale float32) func(t *core.Tensor, r *rand.Rand) error {
	return func(t *core.Tensor, r *rand.Rand) error {
		if t.Type == core.TypeI32 { // GET_ROWS indices into 10 rows
			return Uniform(t, r, 0, 10)
		}
		v := make([]float32, t.NElements())
		for i := range v {
			v[i] = 2*r.Float32() - 1
		}
		n0 := t.Ne[0]
		inf, ninf, nan := float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())
		set := func(row, col int64, x float32) {
			if row*n0+col < int64(len(v)) && col < n0 {
				v[row*n0+col] = x
			}
		}
		switch t.Name {
		case "huge":
			for i := range v {
				v[i] *= scale
			}
		case "tiny":
			for i := range v {
				v[i] *= 1e-20
			}
		case "inf": // row 1: +Inf; row 3: -Inf; row 5: both; row 6: two +Inf
			set(1, 3, inf)
			set(3, n0-1, ninf)
			set(5, 0, inf)
			set(5, 2, ninf)
			set(6, 1, inf)
			set(6, n0/2, inf)
		case "flat": // rows of one value each: 1e30, -3e37, 1e20, 5, 0, then a 1e30 row with one 1e29
			for row, x := range []float32{1e30, -3e37, 1e20, 5, 0, 1e30} {
				for col := int64(0); col < n0; col++ {
					set(int64(row), col, x)
				}
			}
			set(5, n0/2, 1e29)
		case "flatblocks": // blocks of 300 elements of one value each (NORM rows, GROUP_NORM groups)
			// Values x whose f32 tree sum of 300 copies over 256 invocations, divided by 300, is
			// not x again (for NORM: after the prescale by max|x|, x·(1/|x|) = ±(1 - 2^-24)), so a
			// mean summed naively leaves x - mean = ±ulp and the normalised row comes out ±1
			// where the exact result is 0. 3.3e37·300 overflows f32 too.
			vals := []float32{3.3e37, 300001.03, 3e30, -3e30, 1.00000024e30, -3.3e37, 1234.5677, -0.3}
			for i := range v {
				v[i] = vals[(i/300)%len(vals)]
			}
		case "nan": // row 0 starts with NaN, row 4 ends with one, row 7 has two
			set(0, 0, nan)
			set(4, n0-1, nan)
			set(7, 5, nan)
			set(7, n0-3, nan)
		}
		if t.Name == "infq" {
			return infBlocks(t, v)
		}
		return core.SetFloat32s(t, v)
	}
}

// infBlocks stores v quantized into t, then sets some block scales to +Inf and -Inf (f16): block
// 0 of row 2, the last block of row 5 (-Inf), block 1 of row 9.
func infBlocks(t *core.Tensor, v []float32) error {
	if err := core.SetFloat32s(t, v); err != nil {
		return err
	}
	raw := make([]byte, t.NBytes())
	if err := core.TensorGet(t, raw, 0); err != nil {
		return err
	}
	bs, nb := t.Type.Size(), t.Ne[0]/t.Type.BlockSize()
	for _, s := range []struct {
		row, block int64
		bits       uint16
	}{{2, 0, 0x7c00}, {5, nb - 1, 0xfc00}, {9, min(1, nb-1), 0x7c00}} {
		if s.row < t.NRows() {
			bin.LittleEndian.PutUint16(raw[s.row*t.Nb[1]+s.block*bs:], s.bits)
		}
	}
	return core.TensorSet(t, raw, 0)
}

func numericCases() []Case {
	var cs []Case
	f32 := core.TypeF32
	add := func(name string, limit float64, scale float32, build func(*core.Context) *core.Tensor) {
		cs = append(cs, Case{Name: "numerics/" + name, Build: build, MaxNMSE: limit, Init: numericInit(scale)})
	}
	norms := []struct {
		name string
		f    func(c *core.Context, a *core.Tensor) *core.Tensor
	}{
		{"NORM", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Norm(a, 1e-5) }},
		{"RMS_NORM", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.RMSNorm(a, 1e-6) }},
	}
	for _, n := range norms {
		for _, scale := range []float32{1e19, 1e20, 3e37} {
			add(fmt.Sprintf("%s(rows ~%g)", n.name, scale), 0, scale, func(c *core.Context) *core.Tensor {
				return n.f(c, c.NewTensor(f32, 130, 4, 2).SetName("huge"))
			})
		}
		add(n.name+"(rows ~1e19,4099 long)", 0, 1e19, func(c *core.Context) *core.Tensor {
			return n.f(c, c.NewTensor(f32, 4099, 2).SetName("huge"))
		})
		add(n.name+"(rows ~1e-20)", 0, 0, func(c *core.Context) *core.Tensor {
			return n.f(c, c.NewTensor(f32, 70, 3).SetName("tiny"))
		})
		add(n.name+"(rows with Inf)", 0, 0, func(c *core.Context) *core.Tensor {
			return n.f(c, c.NewTensor(f32, 33, 8).SetName("inf"))
		})
		add(n.name+"(rows with NaN)", 0, 0, func(c *core.Context) *core.Tensor {
			return n.f(c, c.NewTensor(f32, 33, 8).SetName("nan"))
		})
		// eps/k² underflows in f32 for a row prescaled by k ~ 1e30: a row of one value has 0
		// variance, so a device got 0·Inf = NaN where the CPU gives 0 (issue 21, trap 7).
		add(n.name+"(rows of equal huge values)", 0, 0, func(c *core.Context) *core.Tensor {
			return n.f(c, c.NewTensor(f32, 300, 7).SetName("flat"))
		})
		// The exact mean of equal values is the value: a float32 sum of the row, rounded, is not
		// (NORM gave ±1 instead of 0 on an NVIDIA H200; the values here fail the same way on
		// lavapipe).
		add(n.name+"(rows of equal values, inexact sums)", 0, 0, func(c *core.Context) *core.Tensor {
			return n.f(c, c.NewTensor(f32, 300, 8).SetName("flatblocks"))
		})
	}
	// GROUP_NORM's mean over a group of equal values (groups of 300 elements: 10·10·3 channels).
	add("GROUP_NORM(groups of equal values, inexact sums)", 0, 0, func(c *core.Context) *core.Tensor {
		return c.GroupNorm(c.NewTensor(f32, 10, 10, 6, 2).SetName("flatblocks"), 2, 1e-5)
	})

	weights := []core.Type{f32, core.TypeF16, core.TypeQ4_0, core.TypeQ4_1, core.TypeQ8_0}
	for _, typ := range weights {
		for _, n := range []int64{1, 8, 33} {
			add(fmt.Sprintf("MUL_MAT(%v,NaN activations,n=%d)", typ, n), nmseMatMul, 0, func(c *core.Context) *core.Tensor {
				return c.MulMat(c.NewTensor(typ, 64, 17), c.NewTensor(f32, 64, n).SetName("nan"))
			})
			add(fmt.Sprintf("MUL_MAT(%v,Inf activations,n=%d)", typ, n), nmseMatMul, 0, func(c *core.Context) *core.Tensor {
				return c.MulMat(c.NewTensor(typ, 64, 17), c.NewTensor(f32, 64, n).SetName("inf"))
			})
			name := "inf"
			if typ.IsQuantized() {
				name = "infq"
			}
			add(fmt.Sprintf("MUL_MAT(%v,Inf weights,n=%d)", typ, n), nmseMatMul, 0, func(c *core.Context) *core.Tensor {
				return c.MulMat(c.NewTensor(typ, 64, 17).SetName(name), c.NewTensor(f32, 64, n))
			})
		}
	}
	// Activations beyond f16's range with f16 weights: finite results (the CPU's f16 activation
	// conversion overflows; its non-finite outputs are recomputed in float32).
	for _, n := range []int64{1, 8} {
		add(fmt.Sprintf("MUL_MAT(f16,activations ~1e5,n=%d)", n), nmseMatMul, 1e5, func(c *core.Context) *core.Tensor {
			return c.MulMat(c.NewTensor(core.TypeF16, 64, 17), c.NewTensor(f32, 64, n).SetName("huge"))
		})
	}
	// Quantizing NaN and ±Inf (CPY and SET_ROWS into Q4_0/Q4_1/Q8_0): core/quant's rule on every
	// device (Q8_0 keeps the infinities' signs, Q4 blocks become NaN).
	for _, typ := range []core.Type{core.TypeQ4_0, core.TypeQ4_1, core.TypeQ8_0} {
		for _, name := range []string{"inf", "nan"} {
			add(fmt.Sprintf("CPY(f32->%v,%s)", typ, name), 1e-5, 0, func(c *core.Context) *core.Tensor {
				return c.Cpy(c.NewTensor(f32, 64, 9).SetName(name), c.NewTensor(typ, 64, 9))
			})
		}
		add(fmt.Sprintf("SET_ROWS(%v,nan)", typ), 1e-5, 0, func(c *core.Context) *core.Tensor {
			return c.SetRows(c.NewTensor(typ, 64, 10), c.NewTensor(f32, 64, 8).SetName("nan"), c.NewTensor(core.TypeI32, 8))
		})
	}
	// Dequantizing ops on weights holding ±Inf: float arithmetic on the dequantized values.
	for _, typ := range weights[1:] {
		name := "inf"
		if typ.IsQuantized() {
			name = "infq"
		}
		add(fmt.Sprintf("OUT_PROD(%v,Inf weights)", typ), nmseMatMul, 0, func(c *core.Context) *core.Tensor {
			return c.OutProd(c.NewTensor(typ, 64, 13).SetName(name), c.NewTensor(f32, 7, 13))
		})
		add(fmt.Sprintf("GET_ROWS(%v,Inf weights)", typ), 0, 0, func(c *core.Context) *core.Tensor {
			return c.GetRows(c.NewTensor(typ, 64, 10).SetName(name), c.NewTensor(core.TypeI32, 12))
		})
		add(fmt.Sprintf("CPY(%v->f32,Inf weights)", typ), 0, 0, func(c *core.Context) *core.Tensor {
			return c.Cpy(c.NewTensor(typ, 64, 10).SetName(name), c.NewTensor(f32, 64, 10))
		})
	}
	return cs
}
