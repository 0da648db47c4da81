package core

import (
	"strings"
	"testing"
)

func TestSetLossAndParamErrors(t *testing.T) {
	ctx := NewContext(ContextParams{NoAlloc: true})
	v := ctx.NewTensor1D(TypeF32, 3)
	if err := ctx.SetLoss(v); err == nil || !strings.Contains(err.Error(), "not a scalar") {
		t.Fatalf("SetLoss on a vector: err = %v", err)
	}
	if ctx.Err() == nil {
		t.Fatal("SetLoss error not recorded on the context")
	}
	ctx = NewContext(ContextParams{NoAlloc: true})
	if err := ctx.SetLoss(ctx.NewTensor1D(TypeF16, 1)); err == nil || !strings.Contains(err.Error(), "f32") {
		t.Fatalf("SetLoss on f16: err = %v", err)
	}
	ctx = NewContext(ContextParams{NoAlloc: true})
	i := ctx.NewTensor1D(TypeI32, 4)
	if err := ctx.SetParam(i); err == nil || !strings.Contains(err.Error(), "i32") && !strings.Contains(err.Error(), "I32") {
		t.Fatalf("SetParam on i32: err = %v", err)
	}
	if i.Flags&FlagParam != 0 {
		t.Fatal("i32 tensor flagged as param")
	}
	ctx = NewContext(ContextParams{NoAlloc: true})
	a := ctx.NewTensor1D(TypeF32, 4)
	if err := ctx.SetParam(ctx.Sqr(a)); err == nil {
		t.Fatal("SetParam on an op result gave no error")
	}
	ctx = NewContext(ContextParams{NoAlloc: true})
	a = ctx.NewTensor1D(TypeF32, 4)
	s := ctx.Sum(a)
	if err := ctx.SetParam(a); err != nil {
		t.Fatal(err)
	}
	if err := ctx.SetLoss(s); err != nil {
		t.Fatal(err)
	}
	if a.Flags&FlagParam == 0 || s.Flags&FlagLoss == 0 {
		t.Fatal("flags not set")
	}
}

func TestTrainOpConstructors(t *testing.T) {
	ctx := NewContext(ContextParams{NoAlloc: true})
	x := ctx.NewTensor2D(TypeF32, 5, 3)
	g := ctx.NewTensor2D(TypeF32, 5, 3)
	if r := ctx.SiluBack(g, x); r.Op != OpSiluBack || r.Src[0] != g || r.Src[1] != x || r.Ne != x.Ne {
		t.Fatalf("SiluBack: %v", r)
	}
	if r := ctx.RMSNormBack(g, x, 1e-5); r.Op != OpRMSNormBack || r.ParamF32(0) != 1e-5 {
		t.Fatalf("RMSNormBack: %v", r)
	}
	r := ctx.SoftMaxExtBack(g, x, 0.5, 8)
	if sp := SoftMaxParamsOf(r); r.Op != OpSoftMaxBack || sp.Scale != 0.5 || sp.MaxBias != 8 {
		t.Fatalf("SoftMaxExtBack: %v %g %g", r, sp.Scale, sp.MaxBias)
	}
	if r := ctx.RepeatBack(ctx.NewTensor2D(TypeF32, 10, 6), x); r.Op != OpRepeatBack || r.Ne != x.Ne || r.Src[1] != nil {
		t.Fatalf("RepeatBack: %v", r)
	}
	labels := ctx.NewTensor2D(TypeF32, 5, 3)
	ce := ctx.CrossEntropyLoss(x, labels)
	if ce.Op != OpCrossEntropyLoss || ce.Ne != [4]int64{1, 1, 1, 1} {
		t.Fatalf("CrossEntropyLoss: %v", ce)
	}
	if r := ctx.CrossEntropyLossBack(ce, x, labels); r.Op != OpCrossEntropyLossBack || r.Src[2] != labels || r.Ne != x.Ne {
		t.Fatalf("CrossEntropyLossBack: %v", r)
	}
	q := ctx.NewTensor3D(TypeF32, 8, 2, 4)
	pos := ctx.NewTensor1D(TypeI32, 4)
	rb := ctx.RopeExtBack(q, pos, nil, RopeParams{NDims: 6, Mode: RopeNeox, FreqBase: 500, FreqScale: 1, AttnFactor: 1})
	if p := RopeParamsOf(rb); rb.Op != OpRopeBack || p.NDims != 6 || p.Mode != RopeNeox || p.FreqBase != 500 {
		t.Fatalf("RopeExtBack: %v %+v", rb, p)
	}
	emb := ctx.NewTensor2D(TypeF32, 5, 7)
	idx := ctx.NewTensor1D(TypeI32, 3)
	if r := ctx.GetRowsBack(g, idx, emb); r.Op != OpGetRowsBack || r.Ne != emb.Ne || r.Src[1] != idx {
		t.Fatalf("GetRowsBack: %v", r)
	}
	acc := ctx.Acc(x, ctx.NewTensor2D(TypeF32, 2, 3), 20, 60, 60, 4)
	if nb1, nb2, nb3, off := AccParamsOf(acc); acc.Op != OpAcc || nb1 != 20 || nb2 != 60 || nb3 != 60 || off != 4 || acc.Ne != x.Ne {
		t.Fatalf("Acc: %v", acc)
	}
	img := ctx.NewTensor4D(TypeF32, 6, 5, 2, 1)
	kern := ctx.NewTensor4D(TypeF32, 3, 2, 2, 1)
	ip := Im2ColParams{S0: 2, S1: 1, P0: 1, P1: 0, D0: 1, D1: 1, Is2D: true}
	im := ctx.Im2Col(kern, img, ip, TypeF32)
	if r := ctx.Im2ColBack(im, kern, img.Ne, ip); r.Op != OpIm2ColBack || r.Ne != img.Ne || Im2ColParamsOf(r) != ip {
		t.Fatalf("Im2ColBack: %v", r)
	}
	pooled := ctx.Pool2D(img, PoolAvg, 2, 3, 2, 1, 1, 0)
	pb := ctx.Pool2DBack(pooled, img, PoolAvg, 2, 3, 2, 1, 1, 0)
	if pp := PoolParamsOf(pb); pb.Op != OpPool2DBack || pb.Ne != img.Ne || pp != (PoolParams{Op: PoolAvg, K0: 2, K1: 3, S0: 2, S1: 1, P0: 1}) {
		t.Fatalf("Pool2DBack: %v %+v", pb, pp)
	}
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}

	w := ctx.NewTensor2D(TypeF32, 5, 3)
	ctx.SetParam(w)
	m, v := ctx.NewTensorLike(w), ctx.NewTensorLike(w)
	ap := ctx.NewTensor1D(TypeF32, AdamWNParams)
	st := ctx.OptStepAdamW(w, g, m, v, ap)
	if st.Op != OpOptStepAdamW || st.ViewSrc != w || st.Src[0] != w || st.Src[1] != g || st.Src[2] != m || st.Src[3] != v || st.Src[4] != ap {
		t.Fatalf("OptStepAdamW: %v", st)
	}
	sp := ctx.NewTensor1D(TypeF32, SGDNParams)
	if st := ctx.OptStepSGD(w, g, sp); st.Op != OpOptStepSGD || st.ViewSrc != w || st.Src[2] != sp {
		t.Fatalf("OptStepSGD: %v", st)
	}
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestTrainOpConstructorErrors(t *testing.T) {
	cases := map[string]func(c *Context){
		"SILU_BACK":          func(c *Context) { c.SiluBack(c.NewTensor1D(TypeF32, 3), c.NewTensor1D(TypeF32, 4)) },
		"RMS_NORM_BACK":      func(c *Context) { c.RMSNormBack(c.NewTensor1D(TypeF16, 3), c.NewTensor1D(TypeF32, 3), 0) },
		"REPEAT_BACK":        func(c *Context) { c.RepeatBack(c.NewTensor1D(TypeF32, 5), c.NewTensor1D(TypeF32, 3)) },
		"CROSS_ENTROPY_LOSS": func(c *Context) { c.CrossEntropyLoss(c.NewTensor1D(TypeF32, 5), c.NewTensor1D(TypeF32, 3)) },
		"OPT_STEP_ADAMW": func(c *Context) {
			w := c.NewTensor1D(TypeF32, 4)
			c.OptStepAdamW(w, c.NewTensor1D(TypeF32, 5), c.NewTensorLike(w), c.NewTensorLike(w), c.NewTensor1D(TypeF32, 7))
		},
		"OPT_STEP_SGD": func(c *Context) {
			w := c.NewTensor1D(TypeF32, 4)
			c.SetParam(w)
			c.OptStepSGD(w, c.NewTensorLike(w), c.NewTensor1D(TypeF32, 7)) // wrong params size
		},
		"ACC": func(c *Context) {
			c.Acc(c.NewTensor2D(TypeF32, 3, 2), c.NewTensor2D(TypeF32, 2, 2), 12, 24, 24, 8) // runs past the end
		},
		"DIAG_MASK_ZERO": func(c *Context) { c.DiagMaskZero(c.NewTensor2D(TypeI32, 3, 3), 0) },
		"IM2COL_BACK": func(c *Context) {
			k := c.NewTensor3D(TypeF32, 2, 1, 1)
			c.Im2ColBack(c.NewTensor3D(TypeF32, 2, 4, 1), k, [4]int64{4, 1, 1, 1}, Im2ColParams{S0: 1, D0: 1}) // OL is 3
		},
		"POOL_2D_BACK": func(c *Context) {
			c.Pool2DBack(c.NewTensor2D(TypeF32, 3, 2), c.NewTensor2D(TypeF32, 4, 4), PoolMax, 2, 2, 2, 2, 0, 0) // pooled is 2x2
		},
		"GET_ROWS_BACK": func(c *Context) {
			// more indices than gradient rows (fewer are valid: ggml reads the first ones)
			c.GetRowsBack(c.NewTensor2D(TypeF32, 4, 3), c.NewTensor1D(TypeI32, 5), c.NewTensor2D(TypeF32, 4, 9))
		},
	}
	for op, f := range cases {
		c := NewContext(ContextParams{NoAlloc: true})
		f(c)
		if err := c.Err(); err == nil || !strings.Contains(err.Error(), op) {
			t.Errorf("%s: err = %v", op, err)
		}
	}
}
