package core

import (
	"strings"
	"testing"
)

// TestIQ3AndQ2_0Types checks the IQ3_XXS, IQ3_S, Q2_0, IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S and IQ1_M
// entries: ggml's ids, names and sizes, their activation types (Q8_K, Q8_0), dequantization for
// all and a quantizer only for Q2_0 (ggml's CPU has none for the IQ3, IQ2 and IQ1 types):
// MUL_MAT, GET_ROWS, OUT_PROD and CPY into f32 build, CPY and SET_ROWS into the IQ types are
// refused with an error naming the missing quantizer.
func TestIQ3AndQ2_0Types(t *testing.T) {
	for _, c := range []struct {
		typ        Type
		id         int32
		name       string
		blck, size int64
		vdt        Type
		quantizer  bool
	}{
		{TypeIQ3_XXS, 18, "iq3_xxs", 256, 98, TypeQ8_K, false},
		{TypeIQ3_S, 21, "iq3_s", 256, 110, TypeQ8_K, false},
		{TypeQ2_0, 42, "q2_0", 64, 18, TypeQ8_0, true},
		{TypeIQ2_XXS, 16, "iq2_xxs", 256, 66, TypeQ8_K, false},
		{TypeIQ2_XS, 17, "iq2_xs", 256, 74, TypeQ8_K, false},
		{TypeIQ2_S, 22, "iq2_s", 256, 82, TypeQ8_K, false},
		{TypeIQ1_S, 19, "iq1_s", 256, 50, TypeQ8_K, false},
		{TypeIQ1_M, 29, "iq1_m", 256, 56, TypeQ8_K, false},
	} {
		typ := c.typ
		if int32(typ) != c.id || typ.String() != c.name || typ.BlockSize() != c.blck || typ.Size() != c.size ||
			!typ.IsQuantized() || !typ.Valid() || typ.VecDotType() != c.vdt {
			t.Errorf("%v: id %d blck %d size %d quantized %v vec_dot_type %v; want id %d %s blck %d size %d %v", typ,
				int32(typ), typ.BlockSize(), typ.Size(), typ.IsQuantized(), typ.VecDotType(), c.id, c.name, c.blck, c.size, c.vdt)
		}
		if got, ok := TypeByName(c.name); !ok || got != typ {
			t.Errorf("TypeByName(%q) = %v, %v", c.name, got, ok)
		}
		if !typ.CanDequantize() || typ.CanConvert() != c.quantizer {
			t.Errorf("%v: CanDequantize %v CanConvert %v; want true, %v", typ, typ.CanDequantize(), typ.CanConvert(), c.quantizer)
		}
		ctx := NewContext(ContextParams{NoAlloc: true})
		k := c.blck * 2
		w := ctx.NewTensor(typ, k, 5)
		ctx.MulMat(w, ctx.NewTensor(TypeF32, k, 3))
		ctx.GetRows(w, ctx.NewTensor(TypeI32, 2))
		ctx.OutProd(w, ctx.NewTensor(TypeF32, 4, 5))
		ctx.Cpy(w, ctx.NewTensor(TypeF32, k, 5))
		ctx.Cpy(w, ctx.NewTensor(typ, k, 5))
		if err := ctx.Err(); err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		ctx.Cpy(ctx.NewTensor(TypeF32, k, 5), ctx.NewTensor(typ, k, 5))
		if err := ctx.Err(); (err != nil) == c.quantizer || err != nil && !strings.Contains(err.Error(), "no quantizer") {
			t.Errorf("%v: CPY from f32 gives %v", typ, err)
		}
		ctx = NewContext(ContextParams{NoAlloc: true})
		ctx.SetRows(ctx.NewTensor(typ, k, 5), ctx.NewTensor(TypeF32, k, 2), ctx.NewTensor(TypeI32, 2))
		if err := ctx.Err(); (err != nil) == c.quantizer {
			t.Errorf("%v: SET_ROWS gives %v", typ, err)
		}
		ctx = NewContext(ContextParams{NoAlloc: true})
		ctx.Cast(ctx.NewTensor(TypeF32, k, 5), typ)
		if err := ctx.Err(); (err != nil) == c.quantizer {
			t.Errorf("%v: Cast gives %v", typ, err)
		}
	}
}
