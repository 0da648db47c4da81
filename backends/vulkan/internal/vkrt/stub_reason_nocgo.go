//go:build !cgo && !novulkan

package vkrt

const reason = "tandem was built without cgo (CGO_ENABLED=0); the Vulkan backend needs cgo"
