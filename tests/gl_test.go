package tests

import (
	"errors"
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

// gl.New takes a device index like vulkan.New: 0 is GL0 (the one OpenGL context, as Devices()
// lists it), any other index is an error wrapping gl.ErrUnavailable; without OpenGL every index
// is that error.
func TestGLNewIndex(t *testing.T) {
	for _, i := range []int{1, -1} {
		if be, err := gl.New(i); be != nil || !errors.Is(err, gl.ErrUnavailable) {
			t.Fatalf("gl.New(%d) = %v, %v; want nil and an error wrapping ErrUnavailable", i, be, err)
		}
	}
	be, err := gl.New(0)
	if ok, why := gl.Available(); !ok {
		if be != nil || !errors.Is(err, gl.ErrUnavailable) {
			t.Fatalf("gl.New(0) without OpenGL = %v, %v", be, err)
		}
		t.Skipf("no OpenGL device: %s", why)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	if ds := gl.Devices(); len(ds) != 1 || be.Name() != ds[0].Name() || be.Name() != "GL0" {
		t.Fatalf("gl.New(0) is %q; Devices() = %v", be.Name(), ds)
	}
}
