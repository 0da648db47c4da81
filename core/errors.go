package core

import (
	"fmt"
	"strings"
)

// The error prefix policy: every error that leaves a tandem API reads "tandem: <where>: <what>"
// with the prefix exactly once, at its start. Errors are composed so that nested parts carry no
// prefix of their own: an *OpError prints its prefix only as the outermost error and describes a
// failed operand's error by its bare message, and Errorf prints each error it wraps with %w by
// its bare message (the text after its own leading "tandem: ", never text cut from the middle of a
// message). errors.Is and errors.As see every wrapped error.

// Prefix starts every error message tandem returns.
const Prefix = "tandem: "

// bareMessage is err's message without its leading Prefix.
func bareMessage(err error) string {
	if e, ok := err.(*OpError); ok {
		return e.message()
	}
	return strings.TrimPrefix(err.Error(), Prefix)
}

// bare shows a wrapped error by its bare message inside an outer message; it unwraps to the error.
type bare struct{ err error }

func (b bare) Error() string { return bareMessage(b.err) }
func (b bare) Unwrap() error { return b.err }

// Errorf is fmt.Errorf for errors that wrap other tandem errors: every package prefixes its
// messages with "tandem: <package>:", so each error named by %w is printed by its bare message
// (without its own leading "tandem: "): "tandem: scheduler: split 1 on Vulkan0: vulkan: ..." rather
// than "...: tandem: vulkan: ...". The result unwraps (errors.Is, errors.As) to everything %w named.
func Errorf(format string, args ...any) error {
	args = append([]any(nil), args...)
	for i, a := range args {
		if err, ok := a.(error); ok && err != nil {
			args[i] = bare{err}
		}
	}
	return &wrapped{err: fmt.Errorf(format, args...)}
}

// wrapped is an Errorf result: its message, unwrapping to the original errors rather than to the
// bare views that printed them.
type wrapped struct {
	err error // the fmt error, whose Unwrap gives the bare views of what %w named
}

func (w *wrapped) Error() string { return w.err.Error() }

func (w *wrapped) Unwrap() []error {
	var us []error
	switch u := w.err.(type) {
	case interface{ Unwrap() []error }:
		us = u.Unwrap()
	case interface{ Unwrap() error }:
		us = []error{u.Unwrap()}
	}
	out := make([]error, 0, len(us))
	for _, e := range us {
		if b, ok := e.(bare); ok {
			e = b.err
		}
		out = append(out, e)
	}
	return out
}

// Operand describes a tensor an OpError names, as it was when the error was made.
type Operand struct {
	Name string         // the tensor's name, or its generated "c<context>#<index>" where it has none
	Op   Op             // the op that computes it (OpNone for data)
	Type Type           // its element type
	Ne   [MaxDims]int64 // its shape
}

// String reads as Tensor.String: name(OP type [ne0,ne1,ne2,ne3]).
func (o Operand) String() string {
	return fmt.Sprintf("%s(%v %v [%d,%d,%d,%d])", o.Name, o.Op, o.Type, o.Ne[0], o.Ne[1], o.Ne[2], o.Ne[3])
}

// OpError is the error of an op or tensor constructor that was given operands or parameters it
// cannot use: the op the caller built (in ggml's spelling, "MUL_MAT" for MulMat, "CONV_2D" for
// Conv2D; "new tensor" and "VIEW" for the tensor constructors), the operands the reason names, and
// the reason. Context.Err, Tensor.Err, Graph.Err and every compute or read of a graph that holds
// a failed op return it (possibly wrapped): use errors.As to get it.
type OpError struct {
	Op       string    // what the caller built: "MUL_MAT", "CONV_2D", "new tensor", ...
	Operands []Operand // the tensors the reason names, in the order it names them
	Reason   string    // what is wrong, without the op and the prefix
	Err      error     // the cause where there is one (ErrOverflow, a failed operand's error), else nil
}

// Error is "tandem: OP: reason" (for a nil *OpError, "tandem: <nil OpError>").
func (e *OpError) Error() string { return Prefix + e.message() }

func (e *OpError) message() string {
	if e == nil {
		return "<nil OpError>"
	}
	if e.Op == "" {
		return e.Reason
	}
	return e.Op + ": " + e.Reason
}

// Unwrap returns the cause (nil where there is none, and for a nil *OpError).
func (e *OpError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// operandsOf describes the tensors among args (a format's arguments).
func operandsOf(args []any) []Operand {
	var ops []Operand
	for _, a := range args {
		if t, ok := a.(*Tensor); ok && t != nil {
			ops = append(ops, Operand{Name: t.displayName(), Op: t.Op, Type: t.Type, Ne: t.Ne})
		}
	}
	return ops
}

// newOpError builds the OpError of a constructor's message "OP: reason" (the op is what precedes
// the first ": "; a message without one is all reason), naming the tensors among args.
func newOpError(msg string, args []any, cause error) *OpError {
	msg = strings.TrimPrefix(msg, Prefix)
	op, reason, ok := strings.Cut(msg, ": ")
	if !ok {
		op, reason = "", msg
	}
	return &OpError{Op: op, Operands: operandsOf(args), Reason: reason, Err: cause}
}

// asOpError returns err as the OpError of op: an OpError stays as it is (named op where it has no
// op), anything else becomes the reason of a new one with err as its cause.
func asOpError(op string, err error) *OpError {
	if e, ok := err.(*OpError); ok {
		if e.Op == "" {
			e.Op = op
		}
		return e
	}
	if op == "" {
		return newOpError(err.Error(), nil, err)
	}
	return &OpError{Op: op, Reason: bareMessage(err), Err: err}
}
