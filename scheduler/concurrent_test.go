package scheduler_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
)

// userGraph builds out = cpy(a*b + b, out) with a, b and out in host memory the caller owns, so a
// result stays readable after other goroutines have replanned the scheduler.
type userGraph struct {
	g         *core.Graph
	a, b, out *core.Tensor
	sum       *core.Tensor // a*b + b, the node the test moves between backends
}

func newUserGraph(t *testing.T, n int64) *userGraph {
	data := core.NewContext(core.ContextParams{MemSize: 3*n*4 + 3*core.TensorOverhead + 1024})
	u := &userGraph{a: data.NewTensor1D(core.TypeF32, n), b: data.NewTensor1D(core.TypeF32, n), out: data.NewTensor1D(core.TypeF32, n)}
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	u.sum = ctx.Add(ctx.Mul(u.a, u.b), u.b)
	r := ctx.Cpy(u.sum, u.out)
	if err := ctx.Err(); err != nil {
		t.Error(err)
		return nil
	}
	u.g = core.NewGraph(core.DefaultGraphSize)
	u.g.BuildForwardExpand(r)
	return u
}

// TestConcurrentUse hammers one scheduler from 8 goroutines, each with its own graph: AllocGraph,
// SetTensorBackend (moving a node between the fake GPU and the CPU), GraphCompute or
// GraphComputeAsync+Synchronize, and checks every result. Run under -race; with Options.Parallel
// too (pipelined runs).
func TestConcurrentUse(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprintf("parallel=%v", parallel), func(t *testing.T) {
			dev := newFakeGPU("FAKE", core.OpMul, core.OpAdd)
			gb, err := dev.NewBackend()
			if err != nil {
				t.Fatal(err)
			}
			defer gb.Close()
			hammer(t, gb, parallel, 12)
		})
	}
}

// TestConcurrentUseVulkan is TestConcurrentUse with the Vulkan backend as the first backend.
func TestConcurrentUseVulkan(t *testing.T) {
	vk := newVulkan(t)
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprintf("parallel=%v", parallel), func(t *testing.T) { hammer(t, vk, parallel, 3) })
	}
}

// hammer runs 8 goroutines on one scheduler over gb and a CPU backend, iters rounds each.
func hammer(t *testing.T, gb core.Backend, parallel bool, iters int) {
	cb, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	s, err := scheduler.New([]core.Backend{gb, cb}, scheduler.Options{Parallel: parallel})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	{
		{
			const workers, n = 8, 64
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					u := newUserGraph(t, n)
					if u == nil {
						return
					}
					av, bv := make([]float32, n), make([]float32, n)
					for i := range bv {
						bv[i] = float32(i%7) - 3
					}
					if err := core.SetFloat32s(u.b, bv); err != nil {
						t.Error(err)
						return
					}
					for it := range iters {
						for i := range av {
							av[i] = float32(w*100 + it + i%5)
						}
						if err := core.SetFloat32s(u.a, av); err != nil {
							t.Error(err)
							return
						}
						pin := core.Backend(cb)
						if (w+it)%2 == 0 {
							pin = gb
						}
						if err := s.SetTensorBackend(u.sum, pin); err != nil {
							t.Errorf("worker %d: SetTensorBackend: %v", w, err)
							return
						}
						if err := s.AllocGraph(u.g); err != nil {
							t.Errorf("worker %d: AllocGraph: %v", w, err)
							return
						}
						var err error
						if it%3 == 2 {
							err = s.GraphComputeAsync(u.g)
							if err == nil {
								err = s.Synchronize()
							}
						} else {
							err = s.GraphCompute(u.g)
						}
						if err != nil {
							t.Errorf("worker %d iteration %d: %v", w, it, err)
							return
						}
						got, err := core.GetFloat32s(u.out)
						if err != nil {
							t.Error(err)
							return
						}
						for i := range got {
							if want := av[i]*bv[i] + bv[i]; got[i] != want {
								t.Errorf("worker %d iteration %d: out[%d] = %v, want %v", w, it, i, got[i], want)
								return
							}
						}
						_ = s.NSplits()
						_ = s.NCopies()
						_ = s.TensorBackend(u.sum)
						_ = s.Stats()
					}
				})
			}
			wg.Wait()
			if st := s.Stats(); st.Runs < workers*iters {
				t.Errorf("%d runs, want at least %d", st.Runs, workers*iters)
			}
		}
	}
}

// TestRepinBetweenRunsVulkan alternates two graphs on one scheduler and moves their middle nodes
// between Vulkan and the CPU: pinning a tensor of one graph drops the plan of the other, which must
// take back the memory it gave (a CPU split read a stale Vulkan buffer).
func TestRepinBetweenRunsVulkan(t *testing.T) {
	vk := newVulkan(t)
	cb, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	s, err := scheduler.New([]core.Backend{vk, cb}, scheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	us := []*userGraph{newUserGraph(t, 16), newUserGraph(t, 16)}
	av, bv := make([]float32, 16), make([]float32, 16)
	for i := range av {
		av[i], bv[i] = float32(i), float32(3-i%4)
	}
	for _, u := range us {
		if err := core.SetFloat32s(u.a, av); err != nil {
			t.Fatal(err)
		}
		if err := core.SetFloat32s(u.b, bv); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		u  int
		be core.Backend
	}{{1, vk}, {0, cb}, {1, cb}, {0, vk}, {1, vk}, {0, cb}}
	for i, st := range steps {
		u := us[st.u]
		if err := s.SetTensorBackend(u.sum, st.be); err != nil {
			t.Fatal(err)
		}
		// Pin the other graph's node too (dropping this plan under the old code).
		if err := s.SetTensorBackend(us[1-st.u].sum, []core.Backend{vk, cb}[i%2]); err != nil {
			t.Fatal(err)
		}
		if err := s.GraphCompute(u.g); err != nil {
			t.Fatalf("step %d (graph %d, sum on %s): %v", i, st.u, st.be.Name(), err)
		}
		if got := s.TensorBackend(u.sum); got != st.be {
			t.Fatalf("step %d: sum ran on %v, pinned to %s", i, got, st.be.Name())
		}
		got, err := core.GetFloat32s(u.out)
		if err != nil {
			t.Fatal(err)
		}
		for j := range got {
			if want := av[j]*bv[j] + bv[j]; got[j] != want {
				t.Fatalf("step %d: out[%d] = %v, want %v", i, j, got[j], want)
			}
		}
	}
}
