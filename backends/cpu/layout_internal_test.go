package cpu

import (
	"reflect"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// TestTensorLayoutHolds: tensorLayout.holds agrees with comparing a fresh layoutOf, for a tensor as
// recorded and after a change to each field the checks read.
func TestTensorLayoutHolds(t *testing.T) {
	// holds compares each field by hand: a field added to tensorLayout must be added there, and
	// to the changes below.
	if n := reflect.TypeFor[tensorLayout]().NumField(); n != 12 {
		t.Fatalf("tensorLayout has %d fields; tensorLayout.holds and this test know 12", n)
	}
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 20})
	a := ctx.NewTensor2D(core.TypeF32, 8, 4)
	n := ctx.Add(a, a)
	buf, err := core.NewHostBuffer(nil, 64)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		f    func(x *core.Tensor)
	}{
		{"nothing", func(x *core.Tensor) {}},
		{"type", func(x *core.Tensor) { x.Type = core.TypeF16 }},
		{"op", func(x *core.Tensor) { x.Op = core.OpSub }},
		{"flags", func(x *core.Tensor) { x.Flags ^= 1 }},
		{"ne", func(x *core.Tensor) { x.Ne[3] = 2 }},
		{"nb", func(x *core.Tensor) { x.Nb[3] += 4 }},
		{"params", func(x *core.Tensor) { x.Params[core.MaxOpParams-1] = 7 }},
		{"src", func(x *core.Tensor) { x.Src[core.MaxSrc-1] = a }},
		{"view source", func(x *core.Tensor) { x.ViewSrc = a }},
		{"view offset", func(x *core.Tensor) { x.ViewOffs = 4 }},
		{"buffer", func(x *core.Tensor) { x.Buffer = buf }},
		{"offset", func(x *core.Tensor) { x.Offset += 64 }},
	} {
		saved := *n
		l := layoutOf(n)
		c.f(n)
		want := l == layoutOf(n)
		if got := l.holds(); got != want {
			t.Errorf("change %s: holds %v, layouts equal %v", c.name, got, want)
		}
		if c.name != "nothing" && want {
			t.Errorf("change %s left the layout equal: the test changes nothing", c.name)
		}
		*n = saved
	}
}
