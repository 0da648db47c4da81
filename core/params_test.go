package core

import "testing"

// Every typed decoder reads back what its op's constructor wrote, and gives the zero value (or
// "another op") for a nil tensor or a node of another op.
func TestParamDecoders(t *testing.T) {
	c := NewContext(ContextParams{NoAlloc: true})
	a := c.NewTensor3D(TypeF32, 16, 8, 2)
	b := c.NewTensor3D(TypeF32, 16, 8, 2)
	p1 := c.Pool1D(a, PoolAvg, 3, 2, 1)
	p2 := c.Pool2D(a, PoolMax, 3, 2, 2, 1, 1, 0)
	sm := c.SoftMaxExt(a, nil, 0.25, 0)
	gl := c.GLU(a, b, GLUGeglu, true)
	un := c.Unary(a, UnaryTanh)
	as := c.Argsort(a, SortDesc)
	cc := c.Concat(a, b, 1)
	dm := c.DiagMaskInf(a, 5)
	nm := c.RMSNorm(a, 1e-5)
	sc := c.ScaleBias(a, 2, -1)
	cl := c.Clamp(a, -3, 4)
	lr := c.LeakyRelu(a, 0.125)
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"pool1d", PoolParamsOf(p1), PoolParams{Op: PoolAvg, K0: 3, K1: 1, S0: 2, S1: 1, P0: 1}},
		{"pool2d", PoolParamsOf(p2), PoolParams{Op: PoolMax, K0: 3, K1: 2, S0: 2, S1: 1, P0: 1, P1: 0}},
		{"softmax", SoftMaxParamsOf(sm), SoftMaxParams{Scale: 0.25}},
		{"glu", GLUParamsOf(gl), GLUParams{Op: GLUGeglu, Swapped: true}},
		{"unary", UnaryOpOf(un), UnaryTanh},
		{"argsort", SortOrderOf(as), SortDesc},
		{"concat", ConcatDimOf(cc), 1},
		{"diag_mask_inf", NPastOf(dm), int64(5)},
		{"rms_norm", EpsOf(nm), float32(1e-5)},
		{"scale", ElementwiseParamsOf(sc), ElementwiseParams{A: 2, B: -1}},
		{"clamp", ElementwiseParamsOf(cl), ElementwiseParams{A: -3, B: 4}},
		{"leaky_relu", ElementwiseParamsOf(lr), ElementwiseParams{A: 0.125}},
		// another op, and nil
		{"pool of add", PoolParamsOf(c.Add(a, b)), PoolParams{}},
		{"unary of nil", UnaryOpOf(nil), UnaryCount},
		{"concat of glu", ConcatDimOf(gl), -1},
		{"eps of nil", EpsOf(nil), float32(0)},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s: got %+v, want %+v", ch.name, ch.got, ch.want)
		}
	}
}

// TypeByName finds every type by the name it prints, and nothing else.
func TestTypeByName(t *testing.T) {
	n := 0
	for id := Type(0); id < 64; id++ {
		if !id.Valid() {
			continue
		}
		n++
		if got, ok := TypeByName(id.String()); !ok || got != id {
			t.Errorf("%v: TypeByName gives %v, %v", id, got, ok)
		}
	}
	if _, ok := TypeByName("q9_Z"); ok || n < 20 {
		t.Errorf("unknown name found, or only %d types", n)
	}
}
