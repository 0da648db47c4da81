package opt_test

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/backends/vulkan"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/opt"
)

// spiral makes cs231n's 3-class spiral: n points per class in 2-D, one-hot labels.
func spiral(n int, seed uint64) (data, labels []float32) {
	r := rand.New(rand.NewPCG(seed, 7))
	for c := 0; c < 3; c++ {
		for i := 0; i < n; i++ {
			t := float64(i) / float64(n)
			theta := float64(c)*4 + t*4 + r.NormFloat64()*0.2
			data = append(data, float32(t*math.Sin(theta)), float32(t*math.Cos(theta)))
			l := []float32{0, 0, 0}
			l[c] = 1
			labels = append(labels, l...)
		}
	}
	return data, labels
}

// mlp is a 2-layer perceptron 2 → hidden → 3 whose first layer's weights live on be1 and second
// layer's on be2, initialized with a fixed seed.
type mlp struct {
	w1, b1, w2, b2 *core.Tensor
	bufs           []core.Buffer
}

func newMLP(t testing.TB, hidden int, be1, be2 core.Backend, seed uint64) *mlp {
	t.Helper()
	m := &mlp{}
	c1 := core.NewContext(core.ContextParams{NoAlloc: true})
	m.w1 = c1.NewTensor2D(core.TypeF32, 2, int64(hidden)).SetName("w1")
	m.b1 = c1.NewTensor2D(core.TypeF32, int64(hidden), 1).SetName("b1")
	c2 := core.NewContext(core.ContextParams{NoAlloc: true})
	m.w2 = c2.NewTensor2D(core.TypeF32, int64(hidden), 3).SetName("w2")
	m.b2 = c2.NewTensor2D(core.TypeF32, 3, 1).SetName("b2")
	for _, p := range []struct {
		c  *core.Context
		be core.Backend
	}{{c1, be1}, {c2, be2}} {
		buf, err := alloc.AllocCtxTensors(p.c, p.be)
		if err != nil {
			t.Fatal(err)
		}
		buf.SetUsage(core.BufferUsageWeights)
		m.bufs = append(m.bufs, buf)
	}
	r := rand.New(rand.NewPCG(seed, 11))
	for _, w := range []*core.Tensor{m.w1, m.b1, m.w2, m.b2} {
		v := make([]float32, w.NElements())
		scale := float32(math.Sqrt(2 / float64(w.Ne[0])))
		for i := range v {
			v[i] = float32(r.NormFloat64()) * scale
		}
		if w == m.b1 || w == m.b2 {
			clear(v)
		}
		if err := core.SetFloat32s(w, v); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, b := range m.bufs {
			b.Free()
		}
	})
	return m
}

func (m *mlp) model() opt.Model {
	return opt.Model{NIn: 2, NOut: 3, Params: []*core.Tensor{m.w1, m.b1, m.w2, m.b2},
		Build: func(c *core.Context, x *core.Tensor) *core.Tensor {
			h := c.Relu(c.Add(c.MulMat(m.w1, x), m.b1))
			return c.Add(c.MulMat(m.w2, h), m.b2)
		}}
}

func newCPU(t testing.TB) core.Backend {
	t.Helper()
	be, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return be
}

// newVulkan returns a Vulkan backend, skipping (or failing with TANDEM_REQUIRE_VULKAN=1) without one.
func newVulkan(t testing.TB) core.Backend {
	t.Helper()
	if ok, why := vulkan.Available(); !ok {
		if os.Getenv("TANDEM_REQUIRE_VULKAN") == "1" {
			t.Fatalf("TANDEM_REQUIRE_VULKAN=1 but Vulkan is unavailable: %s", why)
		}
		t.Skip(why)
	}
	be, err := vulkan.New(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return be
}
