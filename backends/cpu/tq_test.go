package cpu_test

import (
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// tqTypes are ggml's ternary TQ1_0 and TQ2_0 (MUL_MAT, MUL_MAT_ID, GET_ROWS and CPY run them in
// kquant_test.go and mulmat_id_test.go, SET_ROWS and OUT_PROD in fp4_test.go).
var tqTypes = []core.Type{core.TypeTQ1_0, core.TypeTQ2_0}

// TestF64Copies: ggml's CPU runs F64 only through same-type copies (DUP, CONT, CPY: its
// dup_bytes) and CONCAT (concat_any); tandem's copies are exact bytes from dense, permuted and
// strided sources, into another shape in row-major order, and CONCAT puts both sources' bytes
// side by side.
func TestF64Copies(t *testing.T) {
	f64 := core.TypeF64
	ne := [4]int64{5, 7, 3, 2}
	for _, layout := range eltLayoutsFor(f64) {
		for _, op := range []string{"DUP", "CONT", "CONT_SHAPE", "CPY"} {
			layout, op := layout, op
			eltCheckRaw(t, eltName(op, f64, layout), func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []byte) {
				a, _ := eltSourceAny(t, ctx, rng, f64, ne, layout)
				want := eltRaw(t, a)
				switch op {
				case "DUP":
					return ctx.Dup(a), want
				case "CONT":
					return ctx.Cont(a), want
				case "CPY":
					return ctx.Cpy(a, ctx.NewTensor4D(f64, 7, 5, 2, 3)), want
				}
				return ctx.ContShape(a, 15, 14), want
			})
		}
	}
	eltCheckRaw(t, "CONCAT/f64/dim1", func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []byte) {
		a, _ := eltSourceAny(t, ctx, rng, f64, [4]int64{5, 1, 3, 1}, "contig")
		b, _ := eltSourceAny(t, ctx, rng, f64, [4]int64{5, 1, 3, 1}, "contig")
		ra, rb := eltRaw(t, a), eltRaw(t, b)
		var want []byte
		for i2 := range 3 {
			want = append(want, ra[i2*40:(i2+1)*40]...)
			want = append(want, rb[i2*40:(i2+1)*40]...)
		}
		return ctx.Concat(a, b, 1), want
	})
	for _, to := range []core.Type{core.TypeF32, core.TypeF16} {
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		ctx.Cpy(ctx.NewTensor(f64, 4), ctx.NewTensor(to, 4))
		ctx.Cpy(ctx.NewTensor(to, 4), ctx.NewTensor(f64, 4))
		if ctx.Err() == nil {
			t.Errorf("CPY between f64 and %v accepted (ggml's CPU has no F64 conversion)", to)
		}
	}
}
