//go:build gl && cgo

package gl

import (
	"testing"

	"github.com/tandem-ml/tandem/backends/internal/gputest"
)

// TestMulMatIDSplit: MUL_MAT_ID expert weights larger than one storage binding, a range of
// experts a dispatch, on GL (the device's binding limit lowered to 64 KiB for the test;
// gputest.MulMatIDSplit).
func TestMulMatIDSplit(t *testing.T) {
	be := newBackend(t)
	gputest.MulMatIDSplit(t, be, &be.dev.info.ops.MaxStorageBufferRange)
}
