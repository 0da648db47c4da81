package cpu_test

import (
	"math"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/quant"
)

// IQ3_XXS and IQ3_S are read-only like the IQ2/IQ1 types (no quantizer): they join iq_test.go's
// lists (TestIQMulMat: MUL_MAT vs float64 and bit for bit ggml's dot; TestIQRowsAndCopies:
// GET_ROWS, CPY into f32/f16, OUT_PROD, refused writes). Q2_0 has ggml's reference quantizer: it
// joins the K-quant lists (kquant_test.go: MUL_MAT, GET_ROWS, CPY both ways) and the FP4 ones
// (fp4_test.go: SET_ROWS bit for bit, OUT_PROD). All three join MUL_MAT_ID's (mulmat_id_test.go).
func init() {
	iqTypes = append(iqTypes, core.TypeIQ3_XXS, core.TypeIQ3_S)
	iqDots[core.TypeIQ3_XXS] = quant.DotIQ3_XXSQ8_K
	iqDots[core.TypeIQ3_S] = quant.DotIQ3_SQ8_K
	kquantTypes = append(kquantTypes, core.TypeQ2_0)
	fp4Types = append(fp4Types, core.TypeQ2_0)
	mmidTypes = append(mmidTypes, core.TypeIQ3_XXS, core.TypeIQ3_S, core.TypeQ2_0)
}

// TestQ2_0MulMatHand multiplies a hand-built Q2_0 row of two blocks (d = 0.5, codes 0, 1, 2, 3 in
// turn: −0.5, 0, 0.5, 1, code 3 being one the quantizer never writes) by a column of 127s (Q8_0
// scale 1 exactly: 32·1·127 = 4064) and one with −127 at every fourth element (the −0.5s negated:
// 4064 + 2·32·63.5 = 8128): the results are exact.
func TestQ2_0MulMatHand(t *testing.T) {
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 20})
	a := ctx.NewTensor(core.TypeQ2_0, 128, 1)
	b := ctx.NewTensor(core.TypeF32, 128, 2)
	raw := make([]byte, 2*quant.BlockQ2_0Size)
	for blk := range 2 {
		o := blk * quant.BlockQ2_0Size
		raw[o], raw[o+1] = 0x00, 0x38 // f16 0.5
		for j := range 16 {
			raw[o+2+j] = 0b11100100 // codes 0, 1, 2, 3
		}
	}
	if err := core.TensorSet(a, raw, 0); err != nil {
		t.Fatal(err)
	}
	bv := make([]float32, 256)
	var want [2]float32
	w := [4]float32{-0.5, 0, 0.5, 1}
	for i := range 128 {
		bv[i] = 127
		bv[128+i] = 127
		if i%4 == 0 {
			bv[128+i] = -127
		}
		want[0] += w[i%4] * bv[i]
		want[1] += w[i%4] * bv[128+i]
	}
	if err := core.SetFloat32s(b, bv); err != nil {
		t.Fatal(err)
	}
	r := ctx.MulMat(a, b)
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(r)
	if err := cpu.Compute(g, 1); err != nil {
		t.Fatal(err)
	}
	got := mustF32(t, r)
	for j := range 2 {
		if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
			t.Errorf("column %d: %g, want %g", j, got[j], want[j])
		}
	}
}
