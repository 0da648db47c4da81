package alloc

import (
	"errors"
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// AllocError reports a buffer that could not be allocated: the buffer type, the size asked and what
// the device said about its memory.
type AllocError struct {
	BufferType string // buffer type name
	Size       int64  // bytes asked
	Device     string // device name ("" when the buffer type has no device)
	Free       int64  // device memory free, as the device reports it (0: unknown)
	Total      int64  // device memory total (0: unknown)
	Err        error  // the buffer type's error
}

// Error describes the failure ("<nil AllocError>" for a nil e).
func (e *AllocError) Error() string {
	if e == nil {
		return "<nil AllocError>"
	}
	dev := "no device to report its memory"
	if e.Device != "" {
		if e.Total > 0 || e.Free > 0 {
			dev = fmt.Sprintf("device %s reports %d bytes (%s) free of %d (%s)", e.Device, e.Free, mib(e.Free), e.Total, mib(e.Total))
		} else {
			dev = fmt.Sprintf("device %s does not report its memory", e.Device)
		}
	}
	return fmt.Sprintf("tandem: alloc: cannot allocate a %s buffer of %d bytes (%s); %s: %v",
		e.BufferType, e.Size, mib(e.Size), dev, e.Err)
}

// Unwrap returns the buffer type's error (nil for a nil e).
func (e *AllocError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

func mib(n int64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }

// allocBuffer allocates size bytes of bt, turning failures (errors, a nil buffer, a panic in the
// buffer type) into an *AllocError.
func allocBuffer(bt core.BufferType, size int64) (buf core.Buffer, err error) {
	defer func() {
		if r := recover(); r != nil {
			buf, err = nil, newAllocError(bt, size, fmt.Errorf("panic: %v", r))
		}
	}()
	b, err := bt.Alloc(size)
	if err == nil && b == nil {
		err = errors.New("the buffer type returned no buffer")
	}
	if err == nil && b.Size() < size {
		_ = b.Free()
		err = fmt.Errorf("the buffer type returned %d bytes", b.Size())
	}
	if err != nil {
		return nil, newAllocError(bt, size, err)
	}
	return b, nil
}

func newAllocError(bt core.BufferType, size int64, err error) *AllocError {
	e := &AllocError{BufferType: bt.Name(), Size: size, Err: err}
	if d := bt.Device(); d != nil {
		e.Device = d.Name()
		e.Free, e.Total = d.Memory()
	}
	return e
}
