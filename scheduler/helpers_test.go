package scheduler_test

import (
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// fillPattern writes uniform [-1, 1) values (seeded) into t, quantizing for quantized types.
func fillPattern(t testing.TB, x *core.Tensor, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 11))
	v := make([]float32, x.NElements())
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	if x.Type == core.TypeI32 {
		iv := make([]int32, len(v))
		if err := core.SetInt32s(x, iv); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := core.SetFloat32s(x, v); err != nil {
		t.Fatal(err)
	}
}

func nmse(a, b []float32) float64 {
	var num, den float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		num += d * d
		den += float64(b[i]) * float64(b[i])
	}
	if den == 0 {
		return num
	}
	return num / den
}
