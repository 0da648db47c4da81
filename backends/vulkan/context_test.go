//go:build cgo && !novulkan

package vulkan

import (
	"testing"

	"github.com/tandem-ml/tandem/backends/internal/gputest"
)

// A cancelled or expired context stops the graph before its next node with an error wrapping
// the context's; the backend stays usable, and a live context computes normally.
func TestGraphComputeContext(t *testing.T) {
	gputest.GraphComputeContext(t, newBackend(t))
}
