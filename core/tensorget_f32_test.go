package core_test

import (
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// TensorGetF32 reads F32 values (a whole tensor, a range at a byte offset, nothing) and refuses
// other types and the ranges TensorGet refuses.
func TestTensorGetF32(t *testing.T) {
	c := core.NewContext(core.ContextParams{MemSize: 1 << 12})
	x := c.NewTensor2D(core.TypeF32, 3, 2)
	vals := []float32{1, -2.5, 3, 1e-7, -0, 65504}
	if err := core.SetFloat32s(x, vals); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 6)
	if err := core.TensorGetF32(x, got, 0); err != nil {
		t.Fatal(err)
	}
	for i := range vals {
		if got[i] != vals[i] {
			t.Fatalf("value %d: %g, want %g", i, got[i], vals[i])
		}
	}
	part := make([]float32, 2)
	if err := core.TensorGetF32(x, part, 12); err != nil || part[0] != 1e-7 || part[1] != 0 {
		t.Fatalf("two values at byte 12: %v %v", part, err)
	}
	if err := core.TensorGetF32(x, nil, 24); err != nil {
		t.Fatalf("no values at the end: %v", err)
	}
	h := c.NewTensor1D(core.TypeF16, 4)
	for name, c := range map[string]struct {
		err  error
		want string
	}{
		"F16 tensor":    {core.TensorGetF32(h, make([]float32, 1), 0), "not F32"},
		"nil tensor":    {core.TensorGetF32(nil, make([]float32, 1), 0), "nil tensor"},
		"past the end":  {core.TensorGetF32(x, make([]float32, 2), 20), "out of range"},
		"negative":      {core.TensorGetF32(x, make([]float32, 1), -4), "negative"},
		"freed buffer":  {core.TensorGetF32(freedF32(t, 4), make([]float32, 1), 0), "freed"},
		"no memory yet": {core.TensorGetF32(core.NewContext(core.ContextParams{NoAlloc: true}).NewTensor1D(core.TypeF32, 4), make([]float32, 1), 0), "memory"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", name, c.err, c.want)
		}
	}
}
