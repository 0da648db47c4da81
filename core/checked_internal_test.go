package core

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLayoutBytesSmallAgrees: the unchecked fast path of layoutBytes sizes exactly what the checked
// path does wherever it answers, over shapes of every bit length (negative, empty, quantized rows,
// strides near overflow), and answers for the shapes tensors have.
func TestLayoutBytesSmallAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	val := func() int64 {
		switch r.IntN(8) {
		case 0:
			return 0
		case 1:
			return -r.Int64N(5) - 1
		case 2:
			return math.MaxInt64 - r.Int64N(3)
		default:
			return r.Int64N(1 << uint(r.IntN(40)+1))
		}
	}
	types := []Type{TypeF32, TypeF16, TypeQ4_0, TypeQ8_K, TypeI8}
	answered := 0
	for range 200000 {
		typ := types[r.IntN(len(types))]
		var ne, nb [MaxDims]int64
		for i := range MaxDims {
			ne[i], nb[i] = val(), val()
		}
		if r.IntN(2) == 0 { // a contiguous shape of moderate size, as tensors have
			for i := range MaxDims {
				ne[i] = r.Int64N(4096) + 1
			}
			ne[0] *= typ.BlockSize()
			nb = contiguousStrides(typ, ne)
		}
		got, ok := layoutBytesSmall(typ, ne, nb)
		want, err := layoutBytesChecked(typ, ne, nb)
		if !ok {
			continue
		}
		answered++
		if err != nil || got != want {
			t.Fatalf("%v ne %v nb %v: fast path %d, checked %d (%v)", typ, ne, nb, got, want, err)
		}
	}
	if answered < 50000 {
		t.Fatalf("the fast path answered only %d of 200000 shapes", answered)
	}
	if n, ok := layoutBytesSmall(TypeF32, [MaxDims]int64{4096, 32000, 1, 1}, [MaxDims]int64{4, 16384, 16384 * 32000, 16384 * 32000}); !ok || n != 4*4096*32000 {
		t.Fatalf("a 4096x32000 f32 tensor: %d, %v", n, ok)
	}
}
