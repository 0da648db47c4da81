//go:build gl && cgo

package gl

import (
	"testing"

	"github.com/tandem-ml/tandem/backends/internal/gputest"
)

// TestConcatI8: CONCAT of i8 tensors (eltwise_copy_b8: word assembly, atomics on words shared with
// neighbours) along every dimension on GL, bit for bit.
func TestConcatI8(t *testing.T) { gputest.ConcatI8(t, newBackend(t)) }
