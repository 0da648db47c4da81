package tests

import (
	"math"
	"math/rand/v2"

	"github.com/tandem-ml/tandem/core"
)

// MXFP4 writes beyond quantTypeCases' (fp4/): rows of an odd number of 17-byte blocks (every
// block then shares 32-bit words with its neighbours, rows with the next row: the GPU shaders
// write those words' bytes with atomics), CPY into MXFP4 with block maxima at the float32
// roundings of log2 that pick the E8M0 scale (mxfp4Init), SET_ROWS into such rows and the
// same-type copy of permuted MXFP4 rows.

func init() {
	extraCases = append(extraCases, mxfp4Cases)
}

func mxfp4Cases() []Case {
	f32, f16, mx := core.TypeF32, core.TypeF16, core.TypeMXFP4
	return []Case{
		{Name: "mxfp4/CPY(f32->mxfp4,3 blocks a row)", MaxNMSE: rowsExact, Init: copyInit(0),
			Build: func(c *core.Context) *core.Tensor {
				return c.Cpy(c.NewTensor(f32, 96, 5, 3), c.NewTensor(mx, 96, 5, 3))
			}},
		{Name: "mxfp4/CPY(f16->mxfp4,permuted,1 block a row)", MaxNMSE: rowsExact, Init: copyInit(0),
			Build: func(c *core.Context) *core.Tensor {
				a := c.Permute(c.NewTensor(f16, 32, 3, 7, 1), 0, 2, 1, 3)
				return c.Cpy(a, c.NewTensor(mx, 32, 7, 3, 1))
			}},
		{Name: "mxfp4/CPY(f32->mxfp4,scale roundings)", MaxNMSE: rowsExact, Init: mxfp4Init,
			Build: func(c *core.Context) *core.Tensor {
				return c.Cpy(c.NewTensor(f32, 32*45, 7), c.NewTensor(mx, 32*45, 7))
			}},
		{Name: "mxfp4/SET_ROWS(mxfp4,i64,3 blocks a row)", MaxNMSE: rowsExact, Init: copyInit(9),
			Build: func(c *core.Context) *core.Tensor {
				return c.SetRows(c.NewTensor(mx, 96, 9, 2), c.NewTensor(f32, 96, 5, 2), c.NewTensor(core.TypeI64, 5, 1).SetName("idx"))
			}},
		{Name: "mxfp4/CPY(mxfp4->mxfp4,permuted,3 blocks a row)", MaxNMSE: rowsExact, Init: copyInit(0),
			Build: func(c *core.Context) *core.Tensor {
				a := c.Permute(c.NewTensor(mx, 96, 3, 5, 1), 0, 2, 1, 3)
				return c.Cpy(a, c.NewTensor(mx, 96, 5, 3, 1))
			}},
	}
}

// mxfp4Init fills f32 inputs block by block (32 values) with values in (-1, 1) scaled to a largest
// magnitude m·2^E, m = 2 - k·2^-23 just below a power of two, for E over the whole range and
// k around the bound where float32(log2) rounds up to E+1 (the scale's exponent then is one
// more); other types as copyInit.
func mxfp4Init(t *core.Tensor, r *rand.Rand) error {
	if t.Type != core.TypeF32 {
		return copyInit(0)(t, r)
	}
	v := make([]float32, t.NElements())
	ks := []uint32{0, 1, 2, 3, 5, 6, 11, 12, 22, 23, 44, 45, 88, 89, 1000}
	for b := range len(v) / 32 {
		e := -149 + (b*7)%277 // every 7th exponent of -149 .. 127, in turn
		k := ks[b%len(ks)]
		var top float32
		if e < -126 { // subnormal: the top bit at 149+e, the bits below set from the top down
			sh := uint(149 + e)
			top = math.Float32frombits(1<<sh | (1<<sh-1)&^(1<<max(int(sh)-5, 0)-1))
		} else {
			top = math.Float32frombits(uint32(e+127)<<23 | (0x800000 - max(k, 1)))
		}
		j := r.IntN(32)
		for i := range 32 {
			x := (2*r.Float32() - 1) * top
			if i == j {
				x = top
				if r.IntN(2) == 0 {
					x = -top
				}
			}
			v[32*b+i] = x
		}
	}
	return core.SetFloat32s(t, v)
}
