package cpu

import (
	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/quant"
)

// refVecDotK returns the reference dot product (ggml's generic kernel) for the Q5, K-quant and
// IQ4 weight types, nil for other types.
func refVecDotK(t core.Type) vecDot {
	switch t {
	case core.TypeQ5_0:
		return quant.DotQ5_0Q8_0
	case core.TypeQ5_1:
		return quant.DotQ5_1Q8_1
	case core.TypeQ2_K:
		return quant.DotQ2_KQ8_K
	case core.TypeQ3_K:
		return quant.DotQ3_KQ8_K
	case core.TypeQ4_K:
		return quant.DotQ4_KQ8_K
	case core.TypeQ5_K:
		return quant.DotQ5_KQ8_K
	case core.TypeQ6_K:
		return quant.DotQ6_KQ8_K
	case core.TypeIQ4_NL:
		return quant.DotIQ4_NLQ8_0
	case core.TypeIQ4_XS:
		return quant.DotIQ4_XSQ8_K
	}
	return nil
}

// fastVecDotK returns the fastest dot product for the Q5, K-quant and IQ4 weight types: the
// kern kernels (AVX2 with pure-Go twins) for Q4_K, Q5_K, Q6_K, IQ4_XS and IQ4_NL, the reference
// for the others; nil for other types.
func fastVecDotK(t core.Type) vecDot {
	switch t {
	case core.TypeQ4_K:
		return kern.DotQ4_KQ8_K
	case core.TypeQ5_K:
		return kern.DotQ5_KQ8_K
	case core.TypeQ6_K:
		return kern.DotQ6_KQ8_K
	case core.TypeIQ4_XS:
		return kern.DotIQ4_XSQ8_K
	case core.TypeIQ4_NL:
		return kern.DotIQ4_NLQ8_0
	}
	return refVecDotK(t)
}
