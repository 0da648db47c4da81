//go:build !cgo || novulkan

package vulkan

import (
	"errors"
	"os"
	"testing"
)

func TestStub(t *testing.T) {
	ok, why := Available()
	if ok || why == "" {
		t.Fatalf("Available() = %v, %q in a build without Vulkan", ok, why)
	}
	if _, err := New(0); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("New(0) = %v, want ErrUnavailable", err)
	}
	if os.Getenv("TANDEM_REQUIRE_VULKAN") == "1" {
		t.Fatalf("TANDEM_REQUIRE_VULKAN=1 but %s", why)
	}
	t.Skip(why)
}
