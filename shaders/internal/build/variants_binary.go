package build

import "strings"

func init() {
	for _, op := range []string{"add", "sub", "mul", "div"} {
		Register(Variant{
			Name:    op + "_f32",
			Source:  "binary.comp",
			Defines: []string{"OP_" + strings.ToUpper(op)},
		}, Variant{
			// Any mix of f32, f16 and bf16 (the types are specialization constants).
			Name:    op + "_typed",
			Source:  "binary.comp",
			Defines: []string{"OP_" + strings.ToUpper(op), "TYPED"},
		})
	}
}
