//go:build gl && cgo

package gl

import (
	"testing"

	"github.com/tandem-ml/tandem/backends/internal/gputest"
)

// TestGetRowsSplit: GET_ROWS results larger than one storage binding, in parts, on GL (the
// device's binding limit lowered to 64 KiB for the test; gputest.GetRowsSplit).
func TestGetRowsSplit(t *testing.T) {
	be := newBackend(t)
	gputest.GetRowsSplit(t, be, &be.dev.info.ops.MaxStorageBufferRange)
}
