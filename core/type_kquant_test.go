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
