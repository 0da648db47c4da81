package tests

import (
	"os"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// devicesUnderTest are every registered device but the CPU (the reference).
func devicesUnderTest() []core.Device {
	var out []core.Device
	for _, d := range core.Devices() {
		if d.Type() != core.DeviceCPU {
			out = append(out, d)
		}
	}
	return out
}

// TestOps runs the whole op table on every non-CPU device against the CPU reference.
func TestOps(t *testing.T) {
	devs := devicesUnderTest()
	if len(devs) == 0 {
		if os.Getenv("TANDEM_REQUIRE_VULKAN") == "1" {
			t.Fatalf("TANDEM_REQUIRE_VULKAN=1 but no GPU device is registered: %s", vulkanWhy())
		}
		t.Skipf("no device besides the CPU: %s", vulkanWhy())
	}
	for _, d := range devs {
		be, err := d.NewBackend()
		if err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		passed, failed, unsupported := 0, 0, 0
		for i, c := range Cases() {
			r := Run(c, be, uint64(i+1))
			switch {
			case !r.Supported && r.Problem == "":
				unsupported++
			case r.Passed:
				passed++
			default:
				failed++
				t.Errorf("%s %s: %s", d.Name(), c.Name, r.Problem)
			}
		}
		t.Logf("%s: %d passed, %d failed, %d unsupported", d.Name(), passed, failed, unsupported)
		be.Close()
	}
}

// The harness itself, on a second CPU backend: everything must pass.
func TestHarnessCPUSelf(t *testing.T) {
	be, err := cpu.New(cpu.Options{Threads: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	for i, c := range Cases() {
		r := Run(c, be, uint64(i+1))
		if !r.Supported || !r.Passed {
			t.Errorf("%s: supported %v: %s", c.Name, r.Supported, r.Problem)
		}
	}
}

// liar wraps the CPU backend and damages its results, to show the harness catches it.
type liar struct {
	*cpu.Backend
	damage func(g *core.Graph)
}

func (l *liar) GraphCompute(g *core.Graph) error {
	if err := l.Backend.GraphCompute(g); err != nil {
		return err
	}
	l.damage(g)
	return nil
}

func TestHarnessCatchesWrongResults(t *testing.T) {
	inner, _ := cpu.New(cpu.Options{Threads: 1})
	defer inner.Close()
	c := Case{Name: "ADD", Build: func(ctx *core.Context) *core.Tensor {
		return ctx.Add(ctx.NewTensor(core.TypeF32, 5, 7), ctx.NewTensor(core.TypeF32, 5, 7))
	}}
	cases := map[string]func(g *core.Graph){
		"wrong value": func(g *core.Graph) { g.Node(-1).Float32s()[3] += 0.5 },
		"NaN":         func(g *core.Graph) { g.Node(-1).Float32s()[0] = float32(nan()) },
		"out of bounds": func(g *core.Graph) {
			n := g.Node(-1)
			buf := n.Buffer.(core.HostBuffer).Bytes()
			buf[n.Offset+n.NBytes()+1] ^= 0xff
		},
	}
	for name, damage := range cases {
		r := Run(c, &liar{inner, damage}, 1)
		if r.Passed {
			t.Errorf("%s: the harness did not notice", name)
		} else if name == "out of bounds" && !strings.Contains(r.Problem, "sentinel") {
			t.Errorf("%s: reported %q, want a sentinel failure", name, r.Problem)
		}
	}
	if r := Run(c, &liar{inner, func(*core.Graph) {}}, 1); !r.Passed {
		t.Fatalf("honest run failed: %s", r.Problem)
	}
}

func nan() float64 { var z float64; return z / z }
