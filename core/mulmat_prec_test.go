package core_test

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// TestMulMatSetPrec: the precision lands in op parameter 0 (ggml's place for it), PrecDefault
// is the default, and bad calls record errors instead of panicking.
func TestMulMatSetPrec(t *testing.T) {
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	r := c.MulMat(c.NewTensor2D(core.TypeF16, 8, 4), c.NewTensor2D(core.TypeF32, 8, 3))
	if got := core.Prec(r.Params[0]); got != core.PrecDefault {
		t.Fatalf("new MUL_MAT: precision %d, want PrecDefault", got)
	}
	c.MulMatSetPrec(r, core.PrecF32)
	if got := core.Prec(r.Params[0]); got != core.PrecF32 {
		t.Fatalf("after MulMatSetPrec(PrecF32): precision %d", got)
	}
	c.MulMatSetPrec(r, core.PrecBF16)
	if got := core.Prec(r.Params[0]); got != core.PrecBF16 {
		t.Fatalf("after MulMatSetPrec(PrecBF16): precision %d", got)
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	mm := func(c *core.Context) *core.Tensor {
		return c.MulMat(c.NewTensor2D(core.TypeF16, 8, 4), c.NewTensor2D(core.TypeF32, 8, 3))
	}
	for _, tc := range []struct {
		name string
		run  func(c *core.Context)
		want string
	}{
		{"unknown", func(c *core.Context) { c.MulMatSetPrec(mm(c), 3) }, "unknown precision"},
		{"another op", func(c *core.Context) { c.MulMatSetPrec(c.NewTensor1D(core.TypeF32, 4), core.PrecF32) }, "not a MUL_MAT node"},
		{"nil node", func(c *core.Context) { c.MulMatSetPrec(nil, core.PrecF32) }, "nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := callNoPanic(t, func() error { return build(tc.run) })
			if err == nil || !containsFold(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	var nc *core.Context
	nc.MulMatSetPrec(nil, core.PrecF32)
}
