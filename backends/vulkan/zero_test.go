package vulkan_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/vulkan"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/tests/zerotest"
)

// A zero Backend (not made by New) panicked on every method, Name and Close included; now none
// panics and those that return an error say how to make one (in a build without Vulkan, that it
// is unavailable).
func TestZeroBackend(t *testing.T) {
	for _, r := range zerotest.Methods[vulkan.Backend](t, "") {
		if r.Err != nil && !errors.Is(r.Err, vulkan.ErrUnavailable) &&
			!strings.Contains(r.Err.Error(), "zero Backend: create one with vulkan.New") {
			t.Errorf("zero Backend.%s: %v, want an error saying to use vulkan.New", r.Method, r.Err)
		}
	}
	var b vulkan.Backend
	g := core.NewGraph(0)
	if err := b.GraphCompute(g); err == nil {
		t.Fatal("GraphCompute on a zero Backend: no error")
	}
	if b.Name() != "" || b.Device() != nil || b.DefaultBufferType() != nil {
		t.Fatalf("zero Backend: Name %q, Device %v, DefaultBufferType %v", b.Name(), b.Device(), b.DefaultBufferType())
	}
}
