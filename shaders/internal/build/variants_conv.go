package build

func init() {
	// IM2COL with an f32 or f16 destination.
	Register(Variant{Name: "im2col_f32", Source: "im2col.comp"},
		Variant{Name: "im2col_f16", Source: "im2col.comp", Defines: []string{"D_F16"}})
	// POOL_1D / POOL_2D: max and avg over f32 or f16 sources.
	for _, op := range []string{"max", "avg"} {
		def := "OP_MAX"
		if op == "avg" {
			def = "OP_AVG"
		}
		Register(Variant{Name: "pool_" + op + "_f32", Source: "pool.comp", Defines: []string{def}},
			Variant{Name: "pool_" + op + "_f16", Source: "pool.comp", Defines: []string{def, "SRC_F16"}})
	}
}
