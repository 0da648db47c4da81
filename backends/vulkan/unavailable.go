//go:build cgo && !novulkan

package vulkan

import (
	"errors"
	"strings"

	"github.com/tandem-ml/tandem/backends/vulkan/internal/vkrt"
)

// unavailableError is why Vulkan cannot start: one "tandem: vulkan:" prefix, the cause without
// the runtime's own prefixes, and a hint of what to install or set when there is one. It
// matches both ErrUnavailable and the cause with errors.Is.
type unavailableError struct {
	msg   string
	cause error
}

func (e *unavailableError) Error() string   { return e.msg }
func (e *unavailableError) Unwrap() []error { return []error{ErrUnavailable, e.cause} }

// newUnavailable wraps a start-up failure of the Vulkan runtime.
func newUnavailable(cause error) error {
	text := strings.ReplaceAll(cause.Error(), ": vulkan: ", ": ")
	text = strings.TrimPrefix(text, "vulkan: ")
	msg := "tandem: vulkan: unavailable: " + text
	if h := unavailableHint(cause, text); h != "" {
		msg += " (" + h + ")"
	}
	return &unavailableError{msg: msg, cause: cause}
}

// unavailableHint names what to install or set for the usual causes.
func unavailableHint(cause error, text string) string {
	switch {
	case strings.Contains(text, "libvulkan") || strings.Contains(text, "Vulkan loader") || strings.Contains(text, "vkGetInstanceProcAddr"):
		return "install the Vulkan loader (Debian: libvulkan1) or set " + vkrt.LoaderEnv + " to its path"
	case errors.Is(cause, vkrt.ErrLayerNotPresent) || strings.Contains(text, "validation requested"):
		return "install the Khronos validation layer (Debian: vulkan-validationlayers) or unset TANDEM_VK_VALIDATE"
	case strings.Contains(text, "VK_ERROR_INCOMPATIBLE_DRIVER") || strings.Contains(text, "vkCreateInstance"):
		return "no Vulkan driver answered: install one (Debian: mesa-vulkan-drivers gives the CPU driver lavapipe) " +
			"or check VK_ICD_FILENAMES / VK_DRIVER_FILES"
	}
	return ""
}
