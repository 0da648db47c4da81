//go:build amd64 && !purego

package kern

import (
	"testing"

	"github.com/klauspost/cpuid/v2"
)

// The 512-bit SGEMM is kept off the CPUs that split 512-bit operations (AMD before Zen 5).
func TestWide512(t *testing.T) {
	for _, c := range []struct {
		v      cpuid.Vendor
		family int
		want   bool
	}{{cpuid.AMD, 0x19, false}, {cpuid.AMD, 0x1A, true}, {cpuid.Hygon, 0x18, false}, {cpuid.Intel, 6, true}} {
		if got := wide512(&cpuid.CPUInfo{VendorID: c.v, Family: c.family}); got != c.want {
			t.Errorf("%v family %#x: wide512 %v, want %v", c.v, c.family, got, c.want)
		}
	}
}
