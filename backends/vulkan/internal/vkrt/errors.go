//go:build cgo && !novulkan

package vkrt

import (
	"errors"
	"fmt"
)

// Sentinel errors; errors.Is matches them against the errors this package returns.
var (
	ErrDeviceLost        = errors.New("vulkan: device lost")
	ErrOutOfDeviceMemory = errors.New("vulkan: out of device memory")
	ErrOutOfHostMemory   = errors.New("vulkan: out of host memory")
	ErrOutOfRange        = errors.New("vulkan: out of range")
	ErrClosed            = errors.New("vulkan: use of a closed or destroyed object")
	ErrTimeout           = errors.New("vulkan: timeout")
	ErrInvalid           = errors.New("vulkan: invalid argument")
	ErrLayerNotPresent   = errors.New("vulkan: layer not present")
	ErrExtensionNotFound = errors.New("vulkan: extension not present")
	ErrNoDevice          = errors.New("vulkan: no such device")
	ErrUnsupportedDevice = errors.New("vulkan: device not supported")
)

// ResultError is a failed Vulkan call: the function and its VkResult.
type ResultError struct {
	Op     string
	Result int32
}

func (e *ResultError) Error() string {
	return fmt.Sprintf("vulkan: %s failed: %s (%d)", e.Op, resultName(e.Result), e.Result)
}

// Is maps VkResult codes to the sentinel errors.
func (e *ResultError) Is(target error) bool {
	switch e.Result {
	case -1:
		return target == ErrOutOfHostMemory
	case -2:
		return target == ErrOutOfDeviceMemory
	case -4:
		return target == ErrDeviceLost
	case -6:
		return target == ErrLayerNotPresent
	case -7:
		return target == ErrExtensionNotFound
	case 2:
		return target == ErrTimeout
	}
	return false
}

// resultError returns nil for VK_SUCCESS and a *ResultError otherwise.
func resultError(op string, r int32) error {
	if r == 0 {
		return nil
	}
	return &ResultError{Op: op, Result: r}
}

func resultName(r int32) string {
	switch r {
	case 0:
		return "VK_SUCCESS"
	case 1:
		return "VK_NOT_READY"
	case 2:
		return "VK_TIMEOUT"
	case 5:
		return "VK_INCOMPLETE"
	case -1:
		return "VK_ERROR_OUT_OF_HOST_MEMORY"
	case -2:
		return "VK_ERROR_OUT_OF_DEVICE_MEMORY"
	case -3:
		return "VK_ERROR_INITIALIZATION_FAILED"
	case -4:
		return "VK_ERROR_DEVICE_LOST"
	case -5:
		return "VK_ERROR_MEMORY_MAP_FAILED"
	case -6:
		return "VK_ERROR_LAYER_NOT_PRESENT"
	case -7:
		return "VK_ERROR_EXTENSION_NOT_PRESENT"
	case -8:
		return "VK_ERROR_FEATURE_NOT_PRESENT"
	case -9:
		return "VK_ERROR_INCOMPATIBLE_DRIVER"
	case -10:
		return "VK_ERROR_TOO_MANY_OBJECTS"
	case -12:
		return "VK_ERROR_FRAGMENTED_POOL"
	case -13:
		return "VK_ERROR_UNKNOWN"
	case -1000069000:
		return "VK_ERROR_OUT_OF_POOL_MEMORY"
	case -1000011001:
		return "VK_ERROR_VALIDATION_FAILED_EXT"
	}
	return "VkResult"
}
