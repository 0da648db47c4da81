//go:build amd64 && !purego

package kern

// useVNNI (kern_amd64.go, the avx512vnni kernel set) selects the AVX-512 VNNI forms of the
// integer kernels (VPDPBUSD on 256-bit registers).

// The AVX2 integer kernels of kquant_amd64.s. Each reads nb blocks of x and y and writes the
// per-sub-block sums to out; the callers check the lengths.

//go:noescape
func q4kSumsAVX2(nb int, x, y *byte, out *int32)

//go:noescape
func q4kSumsVNNI(nb int, x, y *byte, out *int32)

//go:noescape
func q5kSumsAVX2(nb int, x, y *byte, out *int32)

//go:noescape
func q5kSumsVNNI(nb int, x, y *byte, out *int32)

//go:noescape
func q6kSumsAVX2(nb int, x, y *byte, out *int32)

//go:noescape
func q6kSumsVNNI(nb int, x, y *byte, out *int32)

//go:noescape
func iq4xsSumsAVX2(nb int, x, y *byte, out *int32)

//go:noescape
func iq4xsSumsVNNI(nb int, x, y *byte, out *int32)

//go:noescape
func iq4nlSumsAVX2(nb int, x, y *byte, out *int32)

//go:noescape
func iq4nlSumsVNNI(nb int, x, y *byte, out *int32)

func q4kSums(nb int, x, y []byte, out []int32) {
	if useASM {
		if useVNNI {
			q4kSumsVNNI(nb, &x[0], &y[0], &out[0])
			return
		}
		q4kSumsAVX2(nb, &x[0], &y[0], &out[0])
		return
	}
	q4kSumsGo(nb, x, y, out)
}

func q5kSums(nb int, x, y []byte, out []int32) {
	if useASM {
		if useVNNI {
			q5kSumsVNNI(nb, &x[0], &y[0], &out[0])
			return
		}
		q5kSumsAVX2(nb, &x[0], &y[0], &out[0])
		return
	}
	q5kSumsGo(nb, x, y, out)
}

func q6kSums(nb int, x, y []byte, out []int32) {
	if useASM {
		if useVNNI {
			q6kSumsVNNI(nb, &x[0], &y[0], &out[0])
			return
		}
		q6kSumsAVX2(nb, &x[0], &y[0], &out[0])
		return
	}
	q6kSumsGo(nb, x, y, out)
}

func iq4xsSums(nb int, x, y []byte, out []int32) {
	if useASM {
		if useVNNI {
			iq4xsSumsVNNI(nb, &x[0], &y[0], &out[0])
			return
		}
		iq4xsSumsAVX2(nb, &x[0], &y[0], &out[0])
		return
	}
	iq4xsSumsGo(nb, x, y, out)
}

func iq4nlSums(nb int, x, y []byte, out []int32) {
	if useASM {
		if useVNNI {
			iq4nlSumsVNNI(nb, &x[0], &y[0], &out[0])
			return
		}
		iq4nlSumsAVX2(nb, &x[0], &y[0], &out[0])
		return
	}
	iq4nlSumsGo(nb, x, y, out)
}

//go:noescape
func q8kQuantAVX2(nb int, x *float32, dst *byte)

//go:noescape
func q8kBsumsAVX2(nb int, dst *byte)

// quantizeRowQ8_K writes nb Q8_K blocks (d, codes and bsums) and reports true where the set has
// the AVX2 kernels.
func quantizeRowQ8_K(nb int, x []float32, dst []byte) bool {
	if useASM {
		q8kQuantAVX2(nb, &x[0], &dst[0])
		q8kBsumsAVX2(nb, &dst[0])
		return true
	}
	return false
}
