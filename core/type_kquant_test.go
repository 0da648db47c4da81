package core

import "testing"

func TestNewTypeTable(t *testing.T) {
	cases := []struct {
		typ        Type
		id         int32
		name       string
		blck, size int64
	}{
		{TypeQ5_0, 6, "q5_0", 32, 22},
		{TypeQ5_1, 7, "q5_1", 32, 24},
		{TypeQ2_K, 10, "q2_K", 256, 84},
		{TypeQ3_K, 11, "q3_K", 256, 110},
		{TypeQ4_K, 12, "q4_K", 256, 144},
		{TypeQ5_K, 13, "q5_K", 256, 176},
		{TypeQ6_K, 14, "q6_K", 256, 210},
		{TypeQ8_K, 15, "q8_K", 256, 292},
		{TypeIQ4_NL, 20, "iq4_nl", 32, 18},
		{TypeIQ4_XS, 23, "iq4_xs", 256, 136},
		{TypeMXFP4, 39, "mxfp4", 32, 17},
		{TypeNVFP4, 40, "nvfp4", 64, 36},
		{TypeQ1_0, 41, "q1_0", 128, 18},
	}
	for _, c := range cases {
		if int32(c.typ) != c.id || c.typ.String() != c.name || c.typ.BlockSize() != c.blck || c.typ.Size() != c.size ||
			!c.typ.IsQuantized() || !c.typ.Valid() {
			t.Errorf("%v: id %d blck %d size %d quantized %v; want id %d %s blck %d size %d",
				c.typ, int32(c.typ), c.typ.BlockSize(), c.typ.Size(), c.typ.IsQuantized(), c.id, c.name, c.blck, c.size)
		}
		if got := c.typ.RowSize(4 * c.blck); got != 4*c.size {
			t.Errorf("%v: RowSize(%d) = %d, want %d", c.typ, 4*c.blck, got, 4*c.size)
		}
	}
}

// TestFP4Types checks the MXFP4, NVFP4 and Q1_0 entries beyond the table: Q8_0 activations (ggml's
// vec_dot_type), lookup by name, and the row conversions through the Type methods.
func TestFP4Types(t *testing.T) {
	for _, typ := range []Type{TypeMXFP4, TypeNVFP4, TypeQ1_0} {
		if typ.VecDotType() != TypeQ8_0 {
			t.Errorf("%v: VecDotType %v, want q8_0", typ, typ.VecDotType())
		}
		if got, ok := TypeByName(typ.String()); !ok || got != typ {
			t.Errorf("TypeByName(%q) = %v, %v", typ.String(), got, ok)
		}
		if !typ.CanConvert() || !mulMatWeightTypes[typ] {
			t.Errorf("%v: CanConvert %v, MUL_MAT weights %v", typ, typ.CanConvert(), mulMatWeightTypes[typ])
		}
		n := typ.BlockSize() * 2
		x := make([]float32, n)
		for i := range x {
			x[i] = []float32{0, 0.5, 1, 1.5, 2, 3, 4, 6}[i%8] // the E2M1 values, negated every other 8
			if i/8%2 == 1 {
				x[i] = -x[i]
			}
		}
		q := make([]byte, typ.RowSize(n))
		if err := typ.FromFloat(x, q); err != nil {
			t.Fatal(err)
		}
		y := make([]float32, n)
		if err := typ.ToFloat(q, y); err != nil {
			t.Fatal(err)
		}
		if err := typ.FromFloat(x[:n-1], q); err == nil {
			t.Errorf("%v: FromFloat of a partial block succeeded", typ)
		}
		if typ == TypeQ1_0 {
			continue
		}
		// amax 6: MXFP4's exponent 127 and NVFP4's scale 1.0 (UE4M3 0x38) make every x a code.
		{
			for i := range x {
				if y[i] != x[i] {
					t.Errorf("%v: element %d = %g, want %g", typ, i, y[i], x[i])
				}
			}
		}
	}
}
