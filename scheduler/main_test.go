package scheduler_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/tandem-ml/tandem/backends/vulkan"
)

// TestMain fails the run when the Vulkan validation layer (TANDEM_VK_VALIDATE=1) said anything.
func TestMain(m *testing.M) {
	code := m.Run()
	vulkan.Shutdown()
	if msgs := vulkan.ValidationMessages(); len(msgs) > 0 {
		fmt.Fprintf(os.Stderr, "Vulkan validation reported %d messages:\n", len(msgs))
		for _, s := range msgs {
			fmt.Fprintln(os.Stderr, "  ", s)
		}
		code = 1
	}
	os.Exit(code)
}
