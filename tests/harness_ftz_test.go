package tests

import (
	"math"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// ftzBackend is the CPU backend under another name computing as a device that flushes f32
// denormals to zero: in its inputs before computing and in its results after (unless keep is
// set: then it computes as the CPU does); damage, when set, then changes the results.
type ftzBackend struct {
	*cpu.Backend
	name   string
	keep   bool
	damage func(g *core.Graph)
}

func (b *ftzBackend) Name() string { return b.name }

func (b *ftzBackend) GraphCompute(g *core.Graph) error {
	flush := func(t *core.Tensor) error {
		if t.Type != core.TypeF32 || b.keep {
			return nil
		}
		raw := make([]byte, t.NBytes())
		if err := core.TensorGet(t, raw, 0); err != nil {
			return err
		}
		flushDenormalsF32(raw)
		return core.TensorSet(t, raw, 0)
	}
	for _, l := range g.Leafs() {
		if err := flush(l); err != nil {
			return err
		}
	}
	if err := b.Backend.GraphCompute(g); err != nil {
		return err
	}
	for _, n := range g.Nodes() {
		if n.ViewSrc == nil {
			if err := flush(n); err != nil {
				return err
			}
		}
	}
	if b.damage != nil {
		b.damage(g)
	}
	return nil
}

// TestHarnessFlushToZero: a GPU device whose results are those of flushing f32 denormals (the
// specials inputs hold ±1e-40) passes against the flushed reference, with a note; the same
// results from a backend that is no GPU, and results that match neither reference, fail.
func TestHarnessFlushToZero(t *testing.T) {
	inner, err := cpu.New(cpu.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	cases := []Case{
		{Name: "SQRT,specials", Build: func(c *core.Context) *core.Tensor { return c.Sqrt(c.NewTensor(core.TypeF32, 64, 3)) }},
		{Name: "LOG,specials", Build: func(c *core.Context) *core.Tensor { return c.Log(c.NewTensor(core.TypeF32, 64, 3)) }},
		{Name: "SGN,specials", Build: func(c *core.Context) *core.Tensor { return c.Sgn(c.NewTensor(core.TypeF32, 64, 3)) }},
		// Two nodes, each compared with the flushed reference's.
		{Name: "SGN(SCALE),specials", Build: func(c *core.Context) *core.Tensor {
			return c.Sgn(c.Scale(c.NewTensor(core.TypeF32, 64, 3), 3))
		}},
	}
	for _, c := range cases {
		c.Init = eltSpecials
		if r := Run(c, &ftzBackend{Backend: inner, name: "Vulkan9"}, 1); !r.Passed || !strings.Contains(r.Note, "flushed to zero") {
			t.Errorf("%s, a flushing Vulkan device: passed %v, note %q, problem %q; want a pass with a note", c.Name, r.Passed, r.Note, r.Problem)
		} else {
			t.Log(r.Note)
		}
		if r := Run(c, &ftzBackend{Backend: inner, name: "GL0"}, 1); !r.Passed {
			t.Errorf("%s, a flushing GL device: %s", c.Name, r.Problem)
		}
		// The same results from the CPU or over RPC are wrong.
		for _, name := range []string{"CPU", "RPC[localhost:50052]"} {
			if r := Run(c, &ftzBackend{Backend: inner, name: name}, 1); r.Passed || r.Note != "" {
				t.Errorf("%s, a flushing %s backend: passed %v (note %q), want a failure", c.Name, name, r.Passed, r.Note)
			}
		}
		// Results matching neither reference: one more element changed.
		damage := func(g *core.Graph) { g.Node(-1).Float32s()[1] = 12345 }
		if r := Run(c, &ftzBackend{Backend: inner, name: "Vulkan9", damage: damage}, 1); r.Passed || !strings.Contains(r.Problem, "flushed to zero") {
			t.Errorf("%s, a flushing Vulkan device with a wrong value: passed %v, problem %q; want a failure against both references", c.Name, r.Passed, r.Problem)
		}
		// A device that does not flush passes against the plain reference, without a note.
		if r := Run(c, &ftzBackend{Backend: inner, name: "Vulkan9", keep: true}, 1); !r.Passed || r.Note != "" {
			t.Errorf("%s, a Vulkan device keeping denormals: passed %v, note %q, problem %q", c.Name, r.Passed, r.Note, r.Problem)
		}
	}
	// Inputs without denormals: no second reference, whatever the device.
	c := Case{Name: "SQRT", Build: func(c *core.Context) *core.Tensor { return c.Sqrt(c.NewTensor(core.TypeF32, 64, 3)) }}
	if r := Run(c, &ftzBackend{Backend: inner, name: "Vulkan9", damage: func(g *core.Graph) { g.Node(-1).Float32s()[7] = -1 }}, 1); r.Passed || strings.Contains(r.Problem, "flushed") {
		t.Errorf("a wrong value, no denormal inputs: passed %v, problem %q; want a plain failure", r.Passed, r.Problem)
	}
}

func TestFlushDenormal(t *testing.T) {
	tiny := math.Float32frombits(1)
	for _, c := range []struct{ in, want float32 }{
		{tiny, 0}, {-tiny, float32(math.Copysign(0, -1))}, {1e-40, 0}, {0x1p-126, 0x1p-126}, {-0x1p-126, -0x1p-126},
		{1, 1}, {float32(math.Inf(-1)), float32(math.Inf(-1))},
	} {
		if got := flushDenormal(c.in); math.Float32bits(got) != math.Float32bits(c.want) {
			t.Errorf("flushDenormal(%g) = %g, want %g", c.in, got, c.want)
		}
	}
}
