package tests

import "github.com/tandem-ml/tandem/core"

func init() {
	expectedOps["Vulkan"] = append(expectedOps["Vulkan"], core.OpAcc)
}
