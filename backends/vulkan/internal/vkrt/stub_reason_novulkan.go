//go:build novulkan

package vkrt

const reason = "tandem was built with the novulkan tag"
