//go:build !cgo || novulkan

package vkrt

// Supported reports whether this build includes the Vulkan runtime: it does not
// (built without cgo or with the novulkan tag).
func Supported() (bool, string) {
	return false, reason
}
