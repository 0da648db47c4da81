package gl_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/gl"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/tests/zerotest"
)

// A zero Backend (not made by New) panicked on every method; now none panics and those that
// return an error say how to make one (in a build without GL, that it is unavailable).
func TestZeroBackend(t *testing.T) {
	for _, r := range zerotest.Methods[gl.Backend](t, "") {
		if r.Err != nil && !errors.Is(r.Err, gl.ErrUnavailable) &&
			!strings.Contains(r.Err.Error(), "zero Backend: create one with gl.New") {
			t.Errorf("zero Backend.%s: %v, want an error saying to use gl.New", r.Method, r.Err)
		}
	}
	var b gl.Backend
	if err := b.GraphCompute(core.NewGraph(0)); err == nil {
		t.Fatal("GraphCompute on a zero Backend: no error")
	}
	if b.Name() != "" || b.Device() != nil || b.DefaultBufferType() != nil {
		t.Fatalf("zero Backend: Name %q, Device %v, DefaultBufferType %v", b.Name(), b.Device(), b.DefaultBufferType())
	}
}
