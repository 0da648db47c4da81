package tests

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tandem-ml/tandem/core"
)

// TOP_K over rows longer than a workgroup's shared memory sorts (lavapipe: 4096 elements), as
// test-backend-ops runs it on rows of 2^13 .. 2^19+11 elements: the GPU selects each row's k
// indices with a radix select and sorts only those. Rows with ties (few distinct values, signed
// zeros, infinities and NaNs, or mostly NaNs) check that the GPU takes and orders equal keys as the
// CPU kernel does.

func init() {
	extraCases = append(extraCases, topKLongCases)
}

// topKFew draws each value from vals.
func topKFew(vals ...float32) func(t *core.Tensor, r *rand.Rand) error {
	return func(t *core.Tensor, r *rand.Rand) error {
		v := make([]float32, t.NElements())
		for i := range v {
			v[i] = vals[r.IntN(len(vals))]
		}
		return core.SetFloat32s(t, v)
	}
}

func topKLongCases() []Case {
	f32 := core.TypeF32
	nan, negZero := float32(math.NaN()), float32(math.Copysign(0, -1))
	mostlyNaN := []float32{nan, nan, nan, nan, nan, nan, nan, nan, nan, 0.5, negZero, 0, float32(math.Inf(-1))}
	var cs []Case
	add := func(shape []int64, k int, what string, init func(*core.Tensor, *rand.Rand) error) {
		name := fmt.Sprintf("TOP_K(ne0=%d,k=%d,rows=%d%s)", shape[0], k, shape[1]*shape[2], what)
		cs = append(cs, Case{Name: name, MaxNMSE: nmseExact, Init: init, Build: func(c *core.Context) *core.Tensor {
			return c.TopK(c.NewTensor(f32, shape...), k)
		}})
	}
	add([]int64{5000, 3, 1}, 1, "", nil)
	add([]int64{5000, 2, 2}, 1023, ",ties", eltDiscrete(true))
	add([]int64{5000, 2, 1}, 1023, ",mostly NaN", topKFew(mostlyNaN...))
	add([]int64{16384, 2, 1}, 15, "", nil)
	add([]int64{16384, 2, 1}, 9999, ",signed zeros", topKFew(nan, negZero, 0, 1, -1))
	add([]int64{70000, 2, 1}, 1023, ",ties", eltDiscrete(true))
	add([]int64{70000, 1, 1}, 9999, "", nil)
	add([]int64{1<<19 + 11, 1, 1}, 1, "", nil)
	add([]int64{1<<19 + 11, 1, 1}, 15, ",ties", eltDiscrete(true))
	add([]int64{1<<19 + 11, 1, 1}, 9999, ",ties", eltDiscrete(true))
	cs = append(cs, Case{Name: "TOP_K(ne0=5000,k=15,permuted)", MaxNMSE: nmseExact, Build: func(c *core.Context) *core.Tensor {
		return c.TopK(c.Permute(c.NewTensor(f32, 3, 5000), 1, 0, 2, 3), 15)
	}})
	return cs
}
