package scheduler_test

import (
	"os"
	"testing"

	"github.com/tandem-ml/tandem/backends/vulkan"
)

// TestMain fails the run when the Vulkan validation layer (TANDEM_VK_VALIDATE=1) said anything.
func TestMain(m *testing.M) {
	code := m.Run()
	if !vulkan.ShutdownAndReport(os.Stderr) {
		code = 1
	}
	os.Exit(code)
}
