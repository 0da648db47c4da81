// Package zerotest checks tandem's zero-value rule: every exported type either works as its zero
// value or returns an error saying how to make one. Methods calls every exported method of a
// fresh zero value with zero arguments and fails the test on a panic, a hang, or an error that
// does not carry the expected hint (such as "create one with cpu.New").
package zerotest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// callTimeout bounds one method call: a zero value must answer at once, never wait for work that
// nothing will ever do.
const callTimeout = 10 * time.Second

var (
	ctxType = reflect.TypeFor[context.Context]()
	errType = reflect.TypeFor[error]()
)

// Result is what one method call on a zero value returned.
type Result struct {
	Method string
	Err    error // the method's error result (nil where it has none or returned nil)
}

// Methods calls each exported method of a fresh zero value of T (through a *T) with zero
// arguments: nil pointers, slices, maps, funcs and interfaces, zero numbers and strings, and
// context.Background() for a context.Context. A panic, a call that does not return within
// callTimeout, and a non-nil error that does not contain hint fail t (an empty hint accepts any
// error). The methods named in works are documented to work on a zero value: any error they
// return (about their zero arguments) is accepted. It returns the results in method order, so a
// test can assert more about them.
func Methods[T any](t testing.TB, hint string, works ...string) []Result {
	t.Helper()
	typ := reflect.TypeFor[*T]()
	var out []Result
	for i := range typ.NumMethod() {
		m := typ.Method(i)
		recv := reflect.New(typ.Elem())
		res, err := call(recv.Method(i))
		name := typ.Elem().String() + "." + m.Name
		if err != nil {
			t.Errorf("zero %s: %v", name, err)
			continue
		}
		if res != nil && hint != "" && !slices.Contains(works, m.Name) && !strings.Contains(res.Error(), hint) {
			t.Errorf("zero %s returned %q, which does not say %q", name, res, hint)
		}
		out = append(out, Result{Method: m.Name, Err: res})
	}
	return out
}

// call invokes f with zero arguments in a goroutine, turning a panic or a hang into an error, and
// returns f's last result when it is an error.
func call(f reflect.Value) (result error, failure error) {
	ft := f.Type()
	n := ft.NumIn()
	if ft.IsVariadic() {
		n--
	}
	args := make([]reflect.Value, n)
	for i := range n {
		in := ft.In(i)
		if in == ctxType {
			args[i] = reflect.ValueOf(context.Background())
			continue
		}
		args[i] = reflect.Zero(in)
	}
	type outcome struct {
		res   error
		panic any
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			if p := recover(); p != nil {
				o.panic = p
			}
			done <- o
		}()
		outs := f.Call(args)
		if k := len(outs); k > 0 && ft.Out(k-1) == errType && !outs[k-1].IsNil() {
			o.res = outs[k-1].Interface().(error)
		}
	}()
	select {
	case o := <-done:
		if o.panic != nil {
			return nil, fmt.Errorf("panicked: %v", o.panic)
		}
		return o.res, nil
	case <-time.After(callTimeout):
		return nil, errors.New("did not return")
	}
}
