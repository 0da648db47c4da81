package core

import "testing"

// TestTernaryAndF64Types checks the TQ1_0, TQ2_0 and F64 entries: ggml's ids, names and sizes,
// Q8_K activations for the ternary types, and F64 values moving through SetFloat32s and
// GetFloat32s (no row conversion of its own).
func TestTernaryAndF64Types(t *testing.T) {
	for _, c := range []struct {
		typ        Type
		id         int32
		name       string
		blck, size int64
		quantized  bool
	}{
		{TypeTQ1_0, 34, "tq1_0", 256, 54, true},
		{TypeTQ2_0, 35, "tq2_0", 256, 66, true},
		{TypeF64, 28, "f64", 1, 8, false},
	} {
		if int32(c.typ) != c.id || c.typ.String() != c.name || c.typ.BlockSize() != c.blck || c.typ.Size() != c.size ||
			c.typ.IsQuantized() != c.quantized || !c.typ.Valid() {
			t.Errorf("%v: id %d blck %d size %d quantized %v; want id %d %s blck %d size %d", c.typ, int32(c.typ),
				c.typ.BlockSize(), c.typ.Size(), c.typ.IsQuantized(), c.id, c.name, c.blck, c.size)
		}
		if got, ok := TypeByName(c.name); !ok || got != c.typ {
			t.Errorf("TypeByName(%q) = %v, %v", c.name, got, ok)
		}
	}
	for _, typ := range []Type{TypeTQ1_0, TypeTQ2_0} {
		if typ.VecDotType() != TypeQ8_K || !typ.CanConvert() {
			t.Errorf("%v: vec_dot_type %v, CanConvert %v; want q8_K, true", typ, typ.VecDotType(), typ.CanConvert())
		}
	}
	if TypeF64.CanConvert() || TypeF64.IsFloat() || TypeF64.VecDotType() != TypeF64 {
		t.Errorf("f64: CanConvert %v IsFloat %v vec_dot_type %v", TypeF64.CanConvert(), TypeF64.IsFloat(), TypeF64.VecDotType())
	}

	ctx := NewContext(ContextParams{MemSize: 1 << 16})
	a := ctx.NewTensor(TypeF64, 3, 2)
	p := ctx.Permute(a, 1, 0, 2, 3)
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	in := []float32{1, -2.5, 3e-40, 7, 0.1, -1e30}
	if err := SetFloat32s(a, in); err != nil {
		t.Fatal(err)
	}
	got, err := GetFloat32s(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{1, 7, -2.5, 0.1, 3e-40, -1e30} // the transpose, every value exact
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("f64 transpose read %v, want %v", got, want)
		}
	}
}
