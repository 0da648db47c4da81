package tests

import "github.com/tandem-ml/tandem/backends/vulkan"

// vulkanWhy says why no Vulkan device is present.
func vulkanWhy() string {
	if ok, why := vulkan.Available(); !ok {
		return why
	}
	return "Vulkan is available but registered no device"
}
