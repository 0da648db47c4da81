package build

import "strings"

func init() {
	for _, op := range []string{"add", "sub", "mul", "div"} {
		Register(Variant{
			Name:    op + "_f32",
			Source:  "binary.comp",
			Defines: []string{"OP_" + strings.ToUpper(op)},
		})
	}
}
