//go:build !cgo || novulkan

package vkrt

import (
	"os"
	"testing"
)

func TestStub(t *testing.T) {
	ok, why := Supported()
	if ok || why == "" {
		t.Fatalf("Supported() = %v, %q in a build without Vulkan", ok, why)
	}
	if os.Getenv("TANDEM_REQUIRE_VULKAN") == "1" {
		t.Fatalf("TANDEM_REQUIRE_VULKAN=1 but %s", why)
	}
	t.Skip(why)
}
