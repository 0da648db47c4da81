package core

import (
	"fmt"
	"strings"
)

// Errorf is fmt.Errorf for errors that wrap other tandem errors: every package prefixes its
// messages with "tandem: <package>:", so a wrapped message would repeat "tandem: " in the middle
// ("tandem: scheduler: split 1 on Vulkan0: tandem: vulkan: ..."). The result reads with the
// inner prefixes removed and still unwraps (errors.Is, errors.As) to everything %w named.
func Errorf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	msg := strings.ReplaceAll(err.Error(), ": tandem: ", ": ")
	return &wrapped{msg: msg, err: err}
}

type wrapped struct {
	msg string
	err error // the fmt error, whose Unwrap gives what %w named
}

func (w *wrapped) Error() string { return w.msg }

func (w *wrapped) Unwrap() []error {
	switch u := w.err.(type) {
	case interface{ Unwrap() []error }:
		return u.Unwrap()
	case interface{ Unwrap() error }:
		return []error{u.Unwrap()}
	}
	return nil
}
