//go:build cgo && !novulkan

package vulkan_test

import (
	"os"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/vulkan"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/tests"
)

// TestOpsBeyondDispatchLimits runs the whole op table with the dispatch grid capped at a few
// workgroups per dimension: every output then spans more workgroups than one dispatch may have,
// as very large outputs (GET_ROWS of many long rows, say) do at the device's real limits (65535
// per dimension on most devices), and each encoder's grid-stride loops must still cover it and
// come out as the CPU computes it.
func TestOpsBeyondDispatchLimits(t *testing.T) {
	if ok, why := vulkan.Available(); !ok {
		if os.Getenv("TANDEM_REQUIRE_VULKAN") == "1" {
			t.Fatalf("TANDEM_REQUIRE_VULKAN=1 but Vulkan is not available: %s", why)
		}
		t.Skip(why)
	}
	be, err := vulkan.New(0)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	defer vulkan.LimitGroupsForTest(be, [3]uint32{3, 2, 2})()
	// A software driver (lavapipe: an accelerator, not a GPU) ends every loop of a shader
	// invocation after 65,535 iterations in all (llvmpipe's LP_MAX_TGSI_LOOP_ITERATIONS). The
	// IQ4_XS quantizer's scale search takes about 40,000 per super-block, so a SET_ROWS invocation
	// that loops over two rows' blocks, as it does under these caps, is cut short there; no
	// hardware GPU has the limit, and with the device's real grid every row gets its own workgroup.
	software := be.Device().Type() == core.DeviceAccel
	ran := 0
	for i, c := range tests.Cases() {
		if software && strings.HasPrefix(c.Name, "SET_ROWS(iq4_xs") {
			t.Logf("%s: skipped on a software driver (its loop limit, see above)", c.Name)
			continue
		}
		r := tests.Run(c, be, uint64(i+1))
		if !r.Supported && r.Problem == "" {
			continue
		}
		ran++
		if !r.Passed {
			t.Errorf("%s: NMSE %g: %s", c.Name, r.NMSE, r.Problem)
		}
		if r.Note != "" {
			t.Logf("%s: %s", c.Name, r.Note)
		}
	}
	if ran < 500 {
		t.Errorf("ran %d cases, want at least 500", ran)
	}
	t.Logf("%d cases with at most 3x2x2 workgroups per dispatch", ran)
}
