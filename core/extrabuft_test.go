package core

import (
	"slices"
	"testing"
)

// plainBT is memory without a device, like host memory.
type plainBT struct{ name string }

func (b *plainBT) Name() string                { return b.name }
func (b *plainBT) Alloc(int64) (Buffer, error) { return nil, nil }
func (b *plainBT) Alignment() int64            { return 32 }
func (b *plainBT) MaxSize() int64              { return 0 }
func (b *plainBT) AllocSize(t *Tensor) int64   { return t.NBytes() }
func (b *plainBT) IsHost() bool                { return true }
func (b *plainBT) Device() Device              { return nil }

// Issue 21: extra buffer types are registered explicitly for the buffer type they serve, not found
// through a registration named "CPU".
func TestRegisterExtraBufferTypes(t *testing.T) {
	base, x1, x2 := &plainBT{"base"}, &plainBT{"x1"}, &plainBT{"x2"}
	if got := ExtraBufferTypesFor(base); got != nil {
		t.Fatalf("before registering: %v", got)
	}
	RegisterExtraBufferTypes(base, x1, x2)
	got := ExtraBufferTypesFor(base)
	if !slices.Equal(got, []BufferType{x1, x2}) {
		t.Fatalf("ExtraBufferTypesFor = %v, want [x1 x2]", got)
	}
	got[0] = nil // the caller's copy
	if ExtraBufferTypesFor(base)[0] != BufferType(x1) {
		t.Fatal("ExtraBufferTypesFor returned the registry's slice")
	}
	if ExtraBufferTypesFor(x1) != nil || ExtraBufferTypesFor(nil) != nil {
		t.Fatal("extras for an unregistered or nil buffer type")
	}
	for name, f := range map[string]func(){
		"twice":     func() { RegisterExtraBufferTypes(base, x1) },
		"nil base":  func() { RegisterExtraBufferTypes(nil, x1) },
		"nil extra": func() { RegisterExtraBufferTypes(&plainBT{"other"}, nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
