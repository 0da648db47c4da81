package core_test

import (
	"errors"
	"math"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// Class 3: nil tensors, graphs, contexts and buffers give a clear error, never a panic.
func nilCases(t *testing.T) []badCase {
	nilT := (*core.Tensor)(nil)
	nilC := (*core.Context)(nil)
	nilG := (*core.Graph)(nil)
	n := []string{"nil"}
	a := func() *core.Tensor { return hostF32(t, 4) }
	tensorErr := func(x *core.Tensor) error { return x.Err() }
	return []badCase{
		{3, "SetFloat32s", n, func() error { return core.SetFloat32s(nilT, []float32{1}) }},
		{3, "GetFloat32s", n, func() error { _, err := core.GetFloat32s(nilT); return err }},
		{3, "SetInt32s", n, func() error { return core.SetInt32s(nilT, []int32{1}) }},
		{3, "GetInt32s", n, func() error { _, err := core.GetInt32s(nilT); return err }},
		{3, "TensorSet", n, func() error { return core.TensorSet(nilT, []byte{1}, 0) }},
		{3, "TensorGet", n, func() error { return core.TensorGet(nilT, []byte{1}, 0) }},
		{3, "TensorMemset", n, func() error { return core.TensorMemset(nilT, 0, 0, 1) }},
		{3, "TensorCopy nil src", n, func() error { return core.TensorCopy(nilT, a()) }},
		{3, "TensorCopy nil dst", n, func() error { return core.TensorCopy(a(), nilT) }},
		{3, "TensorAlloc nil tensor", n, func() error {
			buf, _ := core.HostBufferType().Alloc(64)
			return core.TensorAlloc(buf, nilT, 0)
		}},
		{3, "TensorAlloc nil buffer", n, func() error {
			return core.TensorAlloc(nil, core.NewContext(core.ContextParams{NoAlloc: true}).NewTensor1D(f32, 4), 0)
		}},
		{3, "ViewInit", n, func() error { return core.ViewInit(nilT) }},
		{3, "HostData", n, func() error { _, err := nilT.HostData(); return err }},
		{3, "CheckedBytes", n, func() error { _, err := nilT.CheckedBytes(); return err }},
		{3, "Tensor.Err", n, func() error { return nilT.Err() }},
		{3, "BuildForwardExpand nil tensor", n, func() error {
			g := core.NewGraph(core.DefaultGraphSize)
			g.BuildForwardExpand(nil)
			return g.Err()
		}},
		{3, "nil Graph.Err", n, func() error { return nilG.Err() }},
		{3, "nil Graph.BuildForwardExpand", n, func() error { nilG.BuildForwardExpand(a()); return nilG.Err() }},
		{3, "nil Graph.View", n, func() error { return nilG.View(0, 1).Err() }},
		{3, "NewGraphFromLists with a nil node", n, func() error { return core.NewGraphFromLists([]*core.Tensor{nil}, nil).Err() }},
		{3, "NewGraphFromLists with a nil leaf", n, func() error { return core.NewGraphFromLists(nil, []*core.Tensor{a(), nil}).Err() }},
		{3, "nil Context.Err", n, func() error { return nilC.Err() }},
		{3, "nil Context.NewTensor1D", n, func() error { return tensorErr(nilC.NewTensor1D(f32, 4)) }},
		{3, "nil Context.NewF32", n, func() error { return tensorErr(nilC.NewF32(1)) }},
		{3, "nil Context.Add", n, func() error { return tensorErr(nilC.Add(a(), a())) }},
		{3, "nil Context.View1D", n, func() error { return tensorErr(nilC.View1D(a(), 1, 0)) }},
		{3, "nil Context.MulMat", n, func() error { return tensorErr(nilC.MulMat(a(), a())) }},
		{3, "ContShape", n, func() error { return build(func(c *core.Context) { c.ContShape(nil, 4) }) }},
		{3, "ReshapeAs nil a", n, func() error { return build(func(c *core.Context) { c.ReshapeAs(nil, c.NewTensor1D(f32, 4)) }) }},
		{3, "ReshapeAs nil b", n, func() error { return build(func(c *core.Context) { c.ReshapeAs(c.NewTensor1D(f32, 4), nil) }) }},
		{3, "NewTensorLike", n, func() error { return build(func(c *core.Context) { c.NewTensorLike(nil) }) }},
		{3, "GLU nil b is not the single-operand form", n, func() error {
			return build(func(c *core.Context) { c.GLU(c.NewTensor2D(f32, 4, 2), nil, core.GLUSwiglu, false) })
		}},
		{3, "SwigluSplit nil b", n, func() error {
			return build(func(c *core.Context) { c.SwigluSplit(c.NewTensor2D(f32, 4, 2), nil) })
		}},
		{3, "GegluSplit nil b", n, func() error {
			return build(func(c *core.Context) { c.GegluSplit(c.NewTensor2D(f32, 4, 2), nil) })
		}},
		{3, "RegluSplit nil a", n, func() error {
			return build(func(c *core.Context) { c.RegluSplit(nil, c.NewTensor2D(f32, 4, 2)) })
		}},
		{3, "GLUSingle nil", n, func() error { return build(func(c *core.Context) { c.GLUSingle(nil, core.GLUGeglu, true) }) }},
		{3, "Unary nil with a bad function", n, func() error { return build(func(c *core.Context) { c.Unary(nil, 99) }) }},
		{3, "Transpose nil", n, func() error { return build(func(c *core.Context) { c.Transpose(nil) }) }},
		{3, "Cpy nil destination", n, func() error { return build(func(c *core.Context) { c.Cpy(c.NewTensor1D(f32, 4), nil) }) }},
		{3, "Conv2D nil kernel", n, func() error {
			return build(func(c *core.Context) { c.Conv2D(nil, c.NewTensor4D(f32, 4, 4, 1, 1), 1, 1, 0, 0, 1, 1) })
		}},
		{3, "RopeExt nil positions", n, func() error {
			return build(func(c *core.Context) { c.RopeExt(c.NewTensor3D(f32, 4, 2, 3), nil, nil, core.RopeParams{NDims: 4}) })
		}},
		{3, "op on a placeholder of another context", []string{"placeholder", "negative size"}, func() error {
			bad := core.NewContext(core.ContextParams{NoAlloc: true}).NewTensor1D(f32, -1)
			return build(func(c *core.Context) { c.Add(bad, bad) })
		}},
		{3, "graph of a placeholder from a lost context", n, func() error {
			g := core.NewGraph(core.DefaultGraphSize)
			g.BuildForwardExpand(nilC.Sqr(nil))
			return g.Err()
		}},
	}
}

// Class 6: writes that silently did less than asked, and nil results that hid a failure.
func silentCases(t *testing.T) []badCase {
	counts := []string{"values", "elements"}
	freed := []string{"buffer was freed"}
	return []badCase{
		{6, "SetFloat32s fewer values", counts, func() error { return core.SetFloat32s(hostF32(t, 8), make([]float32, 3)) }},
		{6, "SetFloat32s more values", counts, func() error { return core.SetFloat32s(hostF32(t, 8), make([]float32, 9)) }},
		{6, "SetFloat32s no values", counts, func() error { return core.SetFloat32s(hostF32(t, 8), nil) }},
		{6, "SetInt32s fewer values", counts, func() error {
			c := core.NewContext(core.ContextParams{MemSize: 1 << 16})
			return core.SetInt32s(c.NewTensor1D(i32, 4), []int32{1})
		}},
		{6, "SetInt32s more values", counts, func() error {
			c := core.NewContext(core.ContextParams{MemSize: 1 << 16})
			return core.SetInt32s(c.NewTensor1D(i32, 4), make([]int32, 5))
		}},
		{6, "SetFloat32s on a q8_0 tensor, fewer values", counts, func() error {
			c := core.NewContext(core.ContextParams{MemSize: 1 << 16})
			return core.SetFloat32s(c.NewTensor1D(core.TypeQ8_0, 64), make([]float32, 32))
		}},
		{6, "SetFloat32s on a device tensor, fewer values", counts, func() error {
			x, _ := devF32(t, 4)
			return core.SetFloat32s(x, []float32{1})
		}},
		{6, "GetFloat32s of a NoAlloc tensor", []string{"no memory"}, func() error {
			_, err := core.GetFloat32s(core.NewContext(core.ContextParams{NoAlloc: true}).NewTensor1D(f32, 4))
			return err
		}},
		{6, "SetFloat32s of a NoAlloc tensor", []string{"no memory"}, func() error {
			return core.SetFloat32s(core.NewContext(core.ContextParams{NoAlloc: true}).NewTensor1D(f32, 4), make([]float32, 4))
		}},
		{6, "SetInt32s of an f32 tensor", []string{"not i32"}, func() error { return core.SetInt32s(hostF32(t, 4), make([]int32, 4)) }},
		{6, "GetInt32s of an f32 tensor", []string{"not i32"}, func() error { _, err := core.GetInt32s(hostF32(t, 4)); return err }},
		{6, "SetFloat32s of a type without conversion", []string{"no float conversion"}, func() error {
			c := core.NewContext(core.ContextParams{MemSize: 1 << 16})
			return core.SetFloat32s(c.NewTensor1D(i8, 4), make([]float32, 4))
		}},
		{6, "HostData of a device tensor", []string{"not in host memory"}, func() error {
			x, _ := devF32(t, 4)
			_, err := x.HostData()
			return err
		}},
		{6, "HostData after Free", freed, func() error { _, err := freedF32(t, 4).HostData(); return err }},
		{6, "TensorSet after Free", freed, func() error { return core.TensorSet(freedF32(t, 4), make([]byte, 4), 0) }},
		{6, "TensorGet after Free", freed, func() error { return core.TensorGet(freedF32(t, 4), make([]byte, 4), 0) }},
		{6, "TensorMemset after Free", freed, func() error { return core.TensorMemset(freedF32(t, 4), 1, 0, 4) }},
		{6, "SetFloat32s after Free", freed, func() error { return core.SetFloat32s(freedF32(t, 4), make([]float32, 4)) }},
		{6, "GetFloat32s after Free", freed, func() error { _, err := core.GetFloat32s(freedF32(t, 4)); return err }},
		{6, "GetInt32s after Free", freed, func() error {
			c := core.NewContext(core.ContextParams{NoAlloc: true})
			x := c.NewTensor1D(i32, 4)
			buf, _ := core.HostBufferType().Alloc(64)
			if err := core.TensorAlloc(buf, x, 0); err != nil {
				return err
			}
			_ = buf.Free()
			_, err := core.GetInt32s(x)
			return err
		}},
		{6, "TensorCopy from a freed tensor", freed, func() error { return core.TensorCopy(freedF32(t, 4), hostF32(t, 4)) }},
		{6, "TensorCopy into a freed tensor", freed, func() error { return core.TensorCopy(hostF32(t, 4), freedF32(t, 4)) }},
		{6, "device TensorSet after Free", freed, func() error {
			x, buf := devF32(t, 4)
			_ = buf.Free()
			return core.TensorSet(x, make([]byte, 4), 0)
		}},
		{6, "TensorAlloc into a freed buffer", freed, func() error {
			buf, _ := core.HostBufferType().Alloc(64)
			_ = buf.Free()
			return core.TensorAlloc(buf, core.NewContext(core.ContextParams{NoAlloc: true}).NewTensor1D(f32, 4), 0)
		}},
		{6, "ViewInit over a freed source", freed, func() error {
			x := freedF32(t, 4)
			v := x.Context().View1D(x, 2, 0)
			v.Buffer = nil
			return core.ViewInit(v)
		}},
		{6, "host buffer Clear after Free", freed, func() error {
			buf, _ := core.HostBufferType().Alloc(64)
			_ = buf.Free()
			return buf.Clear(0)
		}},
		{6, "NewContext MemSize MaxInt64", []string{"MemSize"}, func() error {
			return core.NewContext(core.ContextParams{MemSize: math.MaxInt64}).Err()
		}},
		{6, "tensor of a context with MemSize MaxInt64", []string{"MemSize"}, func() error {
			return core.NewContext(core.ContextParams{MemSize: math.MaxInt64}).NewTensor1D(f32, 4).Err()
		}},
		{6, "NewContext negative MemSize", []string{"negative MemSize"}, func() error {
			return core.NewContext(core.ContextParams{MemSize: -1}).Err()
		}},
		{6, "graph of a context with MemSize MaxInt64", []string{"MemSize"}, func() error {
			c := core.NewContext(core.ContextParams{MemSize: math.MaxInt64})
			g := core.NewGraph(core.DefaultGraphSize)
			g.BuildForwardExpand(c.Add(c.NewTensor1D(f32, 4), c.NewTensor1D(f32, 4)))
			return g.Err()
		}},
		{6, "NewContext larger than the machine", []string{"cannot allocate"}, func() error {
			return core.NewContext(core.ContextParams{MemSize: 1 << 45}).Err()
		}},
		{6, "NewF32 in a NoAlloc context", []string{"NoAlloc"}, func() error {
			return core.NewContext(core.ContextParams{NoAlloc: true}).NewF32(3).Err()
		}},
		{6, "TensorSet before allocation", []string{"no memory"}, func() error {
			return core.TensorSet(core.NewContext(core.ContextParams{NoAlloc: true}).NewTensor1D(f32, 4), make([]byte, 4), 0)
		}},
		{6, "GetFloat32s of a type without conversion", []string{"no float conversion"}, func() error {
			c := core.NewContext(core.ContextParams{MemSize: 1 << 16})
			_, err := core.GetFloat32s(c.NewTensor1D(i8, 4))
			return err
		}},
		{6, "TensorCopy between layouts", []string{"layouts differ"}, func() error { return core.TensorCopy(hostF32(t, 4), hostF32(t, 2, 2)) }},
		{6, "host buffer of negative size", []string{"negative size"}, func() error {
			b, err := core.NewHostBuffer(core.HostBufferType(), -1)
			if b != nil {
				return errors.New("NewHostBuffer returned a buffer with its error")
			}
			return err
		}},
		{6, "host buffer larger than the machine", []string{"cannot allocate"}, func() error {
			_, err := core.HostBufferType().Alloc(1 << 50)
			return err
		}},
	}
}
