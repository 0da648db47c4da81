//go:build novulkan

package vulkan

const reason = "built with the novulkan tag"
