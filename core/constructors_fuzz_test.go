package core_test

import (
	"math"
	"reflect"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// hostileInts are the sizes, strides, offsets and parameters the constructor fuzzer draws from.
var hostileInts = []int64{0, 1, 2, 3, 4, 8, 16, 32, -1, -4, 1 << 31, 1<<31 - 1, 1 << 32, 1 << 40,
	1 << 62, 1<<62 + 1, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, 64, 7}

var hostileTypes = []core.Type{core.TypeF32, core.TypeF32, core.TypeF32, core.TypeF16, core.TypeBF16,
	core.TypeQ4_0, core.TypeQ8_0, core.TypeI32, core.TypeI8, core.TypeIQ3_XXS, core.TypeQ2_0,
	core.TypeIQ1_M, core.Type(99), core.Type(-1)}

// fuzzSource turns fuzz bytes into choices (zeros once the bytes run out).
type fuzzSource struct {
	b []byte
	i int
}

func (s *fuzzSource) next() int {
	if s.i >= len(s.b) {
		return 0
	}
	v := int(s.b[s.i])
	s.i++
	return v
}

func (s *fuzzSource) pick(n int) int { return s.next() % n }

func (s *fuzzSource) int64() int64 { return hostileInts[s.pick(len(hostileInts))] }

// value builds a random argument of type typ; tensors come from pool (or nil).
func (s *fuzzSource) value(typ reflect.Type, pool []*core.Tensor) reflect.Value {
	if typ == tensorType {
		if k := s.pick(len(pool) + 1); k < len(pool) {
			return reflect.ValueOf(pool[k])
		}
		return reflect.Zero(typ)
	}
	if typ == reflect.TypeOf(core.Type(0)) {
		return reflect.ValueOf(hostileTypes[s.pick(len(hostileTypes))])
	}
	v := reflect.New(typ).Elem()
	switch typ.Kind() {
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(s.int64())
	case reflect.Float32, reflect.Float64:
		v.SetFloat([]float64{0, 1, -1, 0.5, math.NaN(), math.Inf(1), 1e30}[s.pick(7)])
	case reflect.Bool:
		v.SetBool(s.pick(2) == 1)
	case reflect.Slice:
		n := s.pick(6)
		v.Set(reflect.MakeSlice(typ, n, n))
		for i := 0; i < n; i++ {
			v.Index(i).Set(s.value(typ.Elem(), pool))
		}
	case reflect.Struct:
		for i := 0; i < typ.NumField(); i++ {
			if typ.Field(i).IsExported() {
				v.Field(i).Set(s.value(typ.Field(i).Type, pool))
			}
		}
	}
	return v
}

// checkInvariants fails when an accepted tensor has a layout a kernel could not trust.
func checkInvariants(t *testing.T, x *core.Tensor, op string) {
	t.Helper()
	if x == nil || x.Err() != nil {
		return
	}
	n, err := x.CheckedBytes()
	if err != nil {
		t.Fatalf("%s accepted %v with an invalid layout: %v", op, x, err)
	}
	for i := range x.Nb {
		if x.Nb[i] < 0 || x.Ne[i] < 0 {
			t.Fatalf("%s accepted %v with ne %v nb %v", op, x, x.Ne, x.Nb)
		}
	}
	if x.IsEmpty() && n != 0 {
		t.Fatalf("%s: empty %v spans %d bytes", op, x, n)
	}
	if root := x.ViewSrc; root != nil {
		rn, err := root.CheckedBytes()
		if err != nil || x.ViewOffs < 0 || x.ViewOffs+n > rn || x.ViewOffs > rn {
			t.Fatalf("%s: view %v at %d of %d bytes lies outside its source %v of %d bytes", op, x, x.ViewOffs, n, root, rn)
		}
	}
	if !x.IsEmpty() && x.Op != core.OpNone && !x.Op.IsView() { // views compute nothing: their extent is checked above
		for _, src := range x.Src {
			if src != nil && src.IsEmpty() && x.Op != core.OpConcat && x.Op != core.OpSum &&
				x.Op != core.OpSumRows && x.Op != core.OpMean && x.Op != core.OpArgmax &&
				x.Op != core.OpCpy && x.Op != core.OpSetRows && x.Op != core.OpSet { // SET of an empty b is a's copy
				t.Fatalf("%s: non-empty %v reads empty %v", op, x, src)
			}
		}
	}
}

// FuzzConstructors drives every Context method with hostile arguments (sizes, strides, offsets and
// parameters from hostileInts, odd types, nil tensors, tensors built earlier in the run): no call
// panics, and every tensor a constructor accepts has a layout kernels can trust — non-negative
// sizes and strides, a byte span without overflow, views inside their source, no empty operand
// under a non-empty result except where core defines it.
func FuzzConstructors(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Add([]byte{200, 0, 0, 0, 31, 7, 99, 3, 3, 3, 3, 12, 250, 8, 8, 1, 0, 14, 14, 2})
	for seed := 0; seed < 24; seed++ {
		b := make([]byte, 96)
		x := uint32(seed*2654435761 + 1)
		for i := range b {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			b[i] = byte(x)
		}
		f.Add(b)
	}
	ct := reflect.TypeOf(&core.Context{})
	var methods []reflect.Method
	for i := 0; i < ct.NumMethod(); i++ {
		m := ct.Method(i)
		if m.Type.NumOut() == 1 && m.Type.Out(0) == tensorType {
			methods = append(methods, m)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &fuzzSource{b: data}
		c := core.NewContext(core.ContextParams{NoAlloc: s.pick(2) == 0, MemSize: 1 << 16})
		pool := []*core.Tensor{c.NewTensor2D(core.TypeF32, 8, 4), c.NewTensor1D(core.TypeI32, 4)}
		for step := 0; step < 12 && s.i < len(s.b); step++ {
			m := methods[s.pick(len(methods))]
			n := m.Type.NumIn()
			var args []reflect.Value
			for i := 1; i < n; i++ {
				args = append(args, s.value(m.Type.In(i), pool))
			}
			var out *core.Tensor
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("%s panicked: %v", m.Name, r)
					}
				}()
				var res []reflect.Value
				if m.Type.IsVariadic() {
					res = reflect.ValueOf(c).MethodByName(m.Name).CallSlice(args)
				} else {
					res = reflect.ValueOf(c).MethodByName(m.Name).Call(args)
				}
				out = res[0].Interface().(*core.Tensor)
			}()
			checkInvariants(t, out, m.Name)
			if out != nil && out.Err() == nil {
				pool = append(pool, out)
				transfers(t, s, out)
			}
		}
	})
}

// transfers moves bytes in and out of x at hostile offsets: no panic, and an accepted range lies
// inside x.
func transfers(t *testing.T, s *fuzzSource, x *core.Tensor) {
	t.Helper()
	off, size := s.int64(), int64(s.pick(40))
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("transfer on %v at %d, %d bytes panicked: %v", x, off, size, r)
		}
	}()
	inside := x.Buffer != nil && off >= 0 && off <= x.NBytes() && size <= x.NBytes()-off
	for i, err := range []error{
		core.TensorSet(x, make([]byte, size), off),
		core.TensorGet(x, make([]byte, size), off),
		core.TensorMemset(x, 7, off, size),
	} {
		if err == nil && !inside {
			t.Fatalf("transfer %d on %v (%d bytes) accepted bytes [%d,+%d)", i, x, x.NBytes(), off, size)
		}
		if err != nil && inside {
			t.Fatalf("transfer %d on %v refused [%d,+%d): %v", i, x, off, size, err)
		}
	}
	if x.NElements() <= 1<<16 {
		if v, err := core.GetFloat32s(x); err == nil {
			_ = core.SetFloat32s(x, v)
		}
	}
}
