//go:build !cgo && !novulkan

package vulkan

const reason = "built without cgo (CGO_ENABLED=0); the Vulkan backend needs cgo"
