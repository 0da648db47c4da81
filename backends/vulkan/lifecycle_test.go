//go:build cgo && !novulkan

package vulkan

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-ml/tandem/backends/vulkan/internal/vkrt"
	"github.com/tandem-ml/tandem/core"
)

// TestShutdownDuringFirstOpen runs Shutdown concurrently with the first opens of a device (New
// and buffer allocations, which create the logical device) for several rounds. Device open takes
// the device lock and Shutdown the package lock, then each device's: with the opposite order in
// open this deadlocked. Every call must return, either working or with "shut down" (ErrClosed).
// Run it with -race.
func TestShutdownDuringFirstOpen(t *testing.T) {
	if ok, why := Available(); !ok {
		if os.Getenv("TANDEM_REQUIRE_VULKAN") == "1" {
			t.Fatalf("TANDEM_REQUIRE_VULKAN=1 but Vulkan is unavailable: %s", why)
		}
		t.Skip("Vulkan unavailable: " + why)
	}
	const rounds, openers = 6, 4
	errs := make(chan error, rounds*(openers+1)*2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range rounds {
			if err := Shutdown(); err != nil { // the next open is a first open
				errs <- err
			}
			var wg sync.WaitGroup
			for k := range openers {
				wg.Go(func() {
					if k%2 == 0 {
						be, err := New(0)
						if err != nil {
							if !errors.Is(err, vkrt.ErrClosed) {
								errs <- err
							}
							return
						}
						defer be.Close()
					}
					d, err := deviceAt(0)
					if err != nil {
						errs <- err
						return
					}
					buf, err := d.BufferType().Alloc(256)
					if err != nil {
						if !errors.Is(err, vkrt.ErrClosed) {
							errs <- err
						}
						return
					}
					buf.Free()
				})
			}
			wg.Go(func() {
				if err := Shutdown(); err != nil {
					errs <- err
				}
			})
			wg.Wait()
		}
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("Shutdown and first opens did not finish in 2 minutes: deadlock")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// The package works again after the last Shutdown.
	be := newBackend(t)
	if _, err := be.DefaultBufferType().Alloc(64); err != nil {
		t.Fatal(err)
	}
}

// TestShutdownDuringCompute runs Shutdown while other goroutines compute graphs and copy tensors
// in and out on the device: Shutdown waits for the operations in progress, and every later call
// returns an error (never a crash or a use of freed memory). Run it with -race.
func TestShutdownDuringCompute(t *testing.T) {
	be := newBackend(t)
	const workers = 3
	type job struct {
		g   *core.Graph
		a   *core.Tensor
		out *core.Tensor
	}
	jobs := make([]job, workers)
	for i := range jobs {
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		a := ctx.NewTensor1D(core.TypeF32, 256)
		out := ctx.Scale(ctx.Add(a, a), 0.5)
		allocCtx(t, ctx, be.DefaultBufferType())
		g := core.NewGraph(8)
		g.BuildForwardExpand(out)
		jobs[i] = job{g, a, out}
	}
	started := make(chan struct{}, workers)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() {
			vals := make([]float32, 256)
			for it := 0; ; it++ {
				if it == 2 {
					started <- struct{}{}
				}
				for i := range vals {
					vals[i] = float32(i + it)
				}
				if err := core.SetFloat32s(j.a, vals); err != nil {
					errs <- closedOK(err)
					return
				}
				if err := be.GraphCompute(j.g); err != nil {
					errs <- closedOK(err)
					return
				}
				got, err := core.GetFloat32s(j.out)
				if err != nil {
					errs <- closedOK(err)
					return
				}
				if got[7] != vals[7] {
					errs <- fmt.Errorf("iteration %d: got %v, want %v", it, got[7], vals[7])
					return
				}
			}
		})
	}
	for range workers {
		<-started
	}
	if err := Shutdown(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// closedOK returns nil for the errors a call may return once the device is shut down.
func closedOK(err error) error {
	if errors.Is(err, vkrt.ErrClosed) || strings.Contains(err.Error(), "closed") || strings.Contains(err.Error(), "destroyed") {
		return nil
	}
	return err
}
