//go:build cgo && !novulkan

package vulkan

import (
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/tandem-ml/tandem/backends/vulkan/internal/vkrt"
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
					buf, err := d.buft.Alloc(256)
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
