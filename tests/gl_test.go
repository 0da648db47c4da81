package tests

import (
	"os"
	"testing"

	"github.com/tandem-ml/tandem/backends/gl"
	"github.com/tandem-ml/tandem/core"
)

func init() {
	// GL0 runs the same shaders as Vulkan0, so it is expected to run the same ops.
	expectedOps["GL"] = expectedOps["Vulkan"]
	// The OpenGL device (built with -tags gl) runs the tests with a debug context: any error
	// message of the driver fails the call that caused it.
	if os.Getenv("TANDEM_GL_DEBUG") == "" {
		os.Setenv("TANDEM_GL_DEBUG", "1")
	}
}

// TestGLPresent fails when TANDEM_REQUIRE_GL=1 and no OpenGL device is registered (CI builds with
// -tags gl and sets it); otherwise it only reports the device.
func TestGLPresent(t *testing.T) {
	ok, why := gl.Available()
	if !ok {
		if os.Getenv("TANDEM_REQUIRE_GL") == "1" {
			t.Fatalf("TANDEM_REQUIRE_GL=1 but OpenGL is unavailable: %s", why)
		}
		t.Skipf("no OpenGL device: %s", why)
	}
	for _, d := range core.Devices() {
		if d.Name() == "GL0" {
			t.Logf("GL0: %s (%v)", d.Description(), d.Type())
			return
		}
	}
	t.Fatalf("OpenGL is available but GL0 is not registered: %s", glWhy())
}
