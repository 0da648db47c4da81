package core

import (
	"errors"
	"strings"
	"testing"
)

// Errorf drops the inner "tandem: " prefixes of wrapped errors but keeps them matchable.
func TestErrorfOnePrefix(t *testing.T) {
	inner := errors.New("tandem: vulkan: Vulkan0: device lost")
	err := Errorf("tandem: scheduler: split at node %d on %s: %w", 3, "Vulkan0", inner)
	if got, want := err.Error(), "tandem: scheduler: split at node 3 on Vulkan0: vulkan: Vulkan0: device lost"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if !errors.Is(err, inner) {
		t.Fatal("the wrapped error is lost")
	}
	two := Errorf("tandem: a: %w; %w", ErrOverflow, ErrBufferFreed)
	if !errors.Is(two, ErrOverflow) || !errors.Is(two, ErrBufferFreed) || strings.Count(two.Error(), "tandem:") != 1 {
		t.Fatalf("two wrapped errors: %v", two)
	}
	if plain := Errorf("tandem: no wrap %d", 1); errors.Unwrap(plain) != nil || plain.Error() != "tandem: no wrap 1" {
		t.Fatalf("plain: %v", plain)
	}
}
