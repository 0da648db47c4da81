//go:build gl && cgo

package gl

import (
	"testing"

	"github.com/tandem-ml/tandem/backends/internal/gputest"
)

// TestQuantizeK23: CPY from f32/f16/bf16 into Q2_K and Q3_K and SET_ROWS into them on GL, byte for
// byte as core/quant's quantizers (gputest.QuantizeK23).
func TestQuantizeK23(t *testing.T) { gputest.QuantizeK23(t, newBackend(t)) }
