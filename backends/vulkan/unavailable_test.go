//go:build cgo && !novulkan

package vulkan

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/vulkan/internal/vkrt"
)

// Start-up failures read "tandem: vulkan: unavailable: <cause>" with no second "vulkan:"
// prefix, carry a hint for the usual causes, and still match ErrUnavailable and the cause.
func TestUnavailableMessages(t *testing.T) {
	cases := []struct {
		cause error
		want  []string
	}{
		{fmt.Errorf("vulkan: %w", errors.New("libvulkan.so: cannot open shared object file: No such file or directory")),
			[]string{"unavailable: libvulkan.so: cannot open", "libvulkan1", vkrt.LoaderEnv}},
		{&vkrt.ResultError{Op: "vkCreateInstance", Result: -9},
			[]string{"unavailable: vkCreateInstance failed", "mesa-vulkan-drivers", "VK_ICD_FILENAMES"}},
		{fmt.Errorf("vulkan: validation requested but VK_LAYER_KHRONOS_validation is not installed: %w", vkrt.ErrLayerNotPresent),
			[]string{"unavailable: validation requested", "vulkan-validationlayers", "TANDEM_VK_VALIDATE"}},
		{errors.New("vulkan: something else"), []string{"tandem: vulkan: unavailable: something else"}},
	}
	for _, c := range cases {
		err := newUnavailable(c.cause)
		msg := err.Error()
		if strings.Count(msg, "vulkan:") != 1 {
			t.Errorf("%q repeats the vulkan: prefix", msg)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%q lacks %q", msg, w)
			}
		}
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, c.cause) {
			t.Errorf("%q does not match ErrUnavailable and its cause", msg)
		}
	}
	if !errors.Is(newUnavailable(fmt.Errorf("vulkan: x: %w", vkrt.ErrLayerNotPresent)), vkrt.ErrLayerNotPresent) {
		t.Error("the cause's own sentinel is lost")
	}
}
