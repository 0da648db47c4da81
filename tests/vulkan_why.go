package tests

// vulkanWhy says why no Vulkan device is present.
func vulkanWhy() string { return "the Vulkan backend is not built into this package yet" }
