//go:build !gl || !cgo

package gl

import (
	"errors"
	"strings"
	"testing"
)

func TestStubSaysWhy(t *testing.T) {
	ok, why := Available()
	if ok || !strings.Contains(why, reason) {
		t.Fatalf("Available() = %v, %q; want false and the reason %q", ok, why, reason)
	}
	for _, i := range []int{0, 1, -1} {
		if be, err := New(i); be != nil || !errors.Is(err, ErrUnavailable) {
			t.Fatalf("New(%d) = %v, %v; want nil and ErrUnavailable", i, be, err)
		}
	}
	if d := Devices(); len(d) != 0 {
		t.Fatalf("Devices() = %v in a stub build", d)
	}
}
