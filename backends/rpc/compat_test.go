package rpc

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// A GGMLCompat client refuses the nodes that read Q8_K (ggml's CPU cannot dequantize it and its
// server aborts on GET_ROWS of q8_K) and keeps those that write it.
func TestGGMLCPUAcceptsQ8K(t *testing.T) {
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	q := c.NewTensor(core.TypeQ8_K, 256, 5)
	x := c.NewTensor(core.TypeF32, 256, 5)
	for _, tc := range []struct {
		name string
		n    *core.Tensor
		want bool
	}{
		{"GET_ROWS(q8_K)", c.GetRows(q, c.NewTensor(core.TypeI32, 3)), false},
		{"CPY(q8_K->f32)", c.Cpy(q, c.NewTensor(core.TypeF32, 256, 5)), false},
		{"CPY(f32->q8_K)", c.Cpy(x, c.NewTensor(core.TypeQ8_K, 256, 5)), true},
		{"GET_ROWS(f32)", c.GetRows(x, c.NewTensor(core.TypeI32, 3)), true},
	} {
		if err := c.Err(); err != nil {
			t.Fatal(err)
		}
		if got := ggmlCPUAccepts(tc.n); got != tc.want {
			t.Errorf("%s: ggmlCPUAccepts = %v, want %v", tc.name, got, tc.want)
		}
	}
}
