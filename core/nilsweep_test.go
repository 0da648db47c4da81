package core_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// optionalOperands lists the tensor parameters (by position among the method's arguments) that
// may be nil by design.
var optionalOperands = map[string]map[int]bool{
	"SoftMaxExt":           {1: true}, // mask
	"FlashAttnExt":         {3: true}, // mask
	"FlashAttnExtAddSinks": {1: true}, // sinks (nil removes them)
	"SoftMaxAddSinks":      {1: true}, // sinks (nil removes them)
	"RopeExt":              {2: true}, // freq factors
	"RopeExtBack":          {2: true}, // freq factors
	"RopeMulti":            {2: true}, // freq factors
	"RopeExtInplace":       {2: true}, // freq factors
}

var tensorType = reflect.TypeOf((*core.Tensor)(nil))

// sweepArgs builds the arguments of method m (receiver excluded): tensor parameters come from
// tensorArg, others are zero values (variadic parameters get none).
func sweepArgs(m reflect.Method, tensorArg func(i int) *core.Tensor) (args []reflect.Value, tensors []int) {
	ft := m.Type
	n := ft.NumIn()
	if ft.IsVariadic() {
		n--
	}
	for i := 1; i < n; i++ {
		pt := ft.In(i)
		if pt == tensorType {
			tensors = append(tensors, i-1)
			args = append(args, reflect.ValueOf(tensorArg(i-1)))
			continue
		}
		args = append(args, reflect.Zero(pt))
	}
	return args, tensors
}

// callMethod calls method name on ctx, failing the test on a panic, and returns the *Tensor it
// returned (nil when the method returns something else).
func callMethod(t *testing.T, ctx *core.Context, name string, args []reflect.Value) (out *core.Tensor) {
	out, _ = callMethodKind(t, ctx, name, args)
	return out
}

// callMethodKind is callMethod that also says whether the method returns a *Tensor (methods like
// SetParam return only an error).
func callMethodKind(t *testing.T, ctx *core.Context, name string, args []reflect.Value) (out *core.Tensor, returnsTensor bool) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%s panicked: %v", name, r)
		}
	}()
	res := reflect.ValueOf(ctx).MethodByName(name).Call(args)
	if len(res) == 1 && res[0].Type() == tensorType {
		return res[0].Interface().(*core.Tensor), true
	}
	return nil, false
}

// TestNilOperandSweep calls every exported Context method that takes tensors, first with every
// tensor nil, then with one nil at a time (the others valid): none panics, and each records an
// error mentioning nil and returns a placeholder carrying it (parameters documented as optional
// excepted).
func TestNilOperandSweep(t *testing.T) {
	ct := reflect.TypeOf(&core.Context{})
	swept := 0
	for i := 0; i < ct.NumMethod(); i++ {
		m := ct.Method(i)
		_, tensors := sweepArgs(m, func(int) *core.Tensor { return nil })
		if len(tensors) == 0 {
			continue
		}
		swept++
		t.Run(m.Name, func(t *testing.T) {
			for _, nilAt := range append([]int{-1}, tensors...) {
				if optionalOperands[m.Name][nilAt] {
					continue
				}
				ctx := core.NewContext(core.ContextParams{NoAlloc: true})
				args, _ := sweepArgs(m, func(i int) *core.Tensor {
					if nilAt == -1 || i == nilAt {
						return nil
					}
					return ctx.NewTensor2D(core.TypeF32, 4, 4)
				})
				out, returnsTensor := callMethodKind(t, ctx, m.Name, args)
				err := ctx.Err()
				if err == nil || !strings.Contains(err.Error(), "nil") {
					t.Fatalf("nil operand %d (-1: all): context error %v, want one mentioning nil", nilAt, err)
				}
				if oe, ok := err.(*core.OpError); !ok || oe.Op == "" || strings.Count(err.Error(), "tandem: ") != 1 {
					t.Fatalf("nil operand %d: context error %q (%T) is not an *OpError of the op with one prefix", nilAt, err, err)
				}
				if returnsTensor && (out == nil || out.Err() == nil) {
					t.Fatalf("nil operand %d: returned %v, want a placeholder carrying the error", nilAt, out)
				}
			}
		})
	}
	t.Logf("%d Context methods taking tensors swept with nil operands", swept)
	if swept < 75 {
		t.Errorf("only %d methods swept", swept)
	}
}

// TestNilContextSweep calls every exported Context method on a nil *Context with valid tensors:
// none panics, and those returning tensors return a placeholder whose error names the nil context.
func TestNilContextSweep(t *testing.T) {
	ct := reflect.TypeOf(&core.Context{})
	var nilCtx *core.Context
	other := core.NewContext(core.ContextParams{NoAlloc: true})
	for i := 0; i < ct.NumMethod(); i++ {
		m := ct.Method(i)
		args, _ := sweepArgs(m, func(int) *core.Tensor { return other.NewTensor2D(core.TypeF32, 4, 4) })
		out := callMethod(t, nilCtx, m.Name, args)
		if m.Type.NumOut() == 1 && m.Type.Out(0) == tensorType && m.Name != "TensorByName" { // a lookup: nil means not found
			if out == nil || out.Err() == nil || !strings.Contains(out.Err().Error(), "nil context") {
				t.Errorf("%s on a nil context returned %v (error %v), want a placeholder naming the nil context", m.Name, out, out.Err())
			}
		}
	}
	if err := nilCtx.Err(); err == nil || !strings.Contains(err.Error(), "nil context") {
		t.Errorf("nil context Err() = %v", err)
	}
}
