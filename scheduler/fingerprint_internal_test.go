package scheduler

import (
	"reflect"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// TestRecordIs: nodeRecord.is agrees with comparing a fresh record, for a tensor as recorded and
// after a change to each field a plan depends on (and, for leafs, a move to another buffer).
func TestRecordIs(t *testing.T) {
	// is compares each field by hand: a field added to nodeRecord must be added there, and to
	// the changes below.
	if n := reflect.TypeFor[nodeRecord]().NumField(); n != 10 {
		t.Fatalf("nodeRecord has %d fields; nodeRecord.is and this test know 10", n)
	}
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 20})
	a := ctx.NewTensor2D(core.TypeF32, 8, 4)
	b := ctx.NewTensor2D(core.TypeF32, 8, 4)
	n := ctx.Add(a, b)
	buf, err := core.NewHostBuffer(nil, 64)
	if err != nil {
		t.Fatal(err)
	}
	changes := []struct {
		name string
		f    func(x *core.Tensor)
	}{
		{"nothing", func(x *core.Tensor) {}},
		{"op", func(x *core.Tensor) { x.Op = core.OpSub }},
		{"type", func(x *core.Tensor) { x.Type = core.TypeF16 }},
		{"ne", func(x *core.Tensor) { x.Ne[3] = 2 }},
		{"nb", func(x *core.Tensor) { x.Nb[2] += 4 }},
		{"params", func(x *core.Tensor) { x.Params[core.MaxOpParams-1] = 7 }},
		{"src", func(x *core.Tensor) { x.Src[core.MaxSrc-1] = a }},
		{"view", func(x *core.Tensor) { x.ViewSrc = a }},
		{"flags", func(x *core.Tensor) { x.Flags ^= 1 }},
		{"buffer", func(x *core.Tensor) { x.Buffer = buf }},
	}
	for _, withBuf := range []bool{false, true} {
		for _, c := range changes {
			saved := *n
			r := record(n, withBuf)
			c.f(n)
			want := r == record(n, withBuf)
			if got := r.is(n, withBuf); got != want {
				t.Errorf("withBuf %v, change %s: is %v, records equal %v", withBuf, c.name, got, want)
			}
			if c.name != "nothing" && c.name != "buffer" && want {
				t.Errorf("change %s left the record equal: the test changes nothing", c.name)
			}
			*n = saved
		}
	}
}
