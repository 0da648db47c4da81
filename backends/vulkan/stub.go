//go:build !cgo || novulkan

package vulkan

import (
	"context"
	"errors"

	"github.com/tandem-ml/tandem/core"
)

// ErrUnavailable is returned by New when Vulkan cannot be used.
var ErrUnavailable = errors.New("tandem: vulkan: " + reason)

// Available reports whether a usable Vulkan device exists; it never does in
// this build.
func Available() (bool, string) { return false, reason }

// DeviceCount returns the number of usable Vulkan devices: 0 in this build.
func DeviceCount() int { return 0 }

// Devices returns the usable Vulkan devices: none in this build.
func Devices() []core.Device { return nil }

// Backend is the Vulkan backend; this build cannot create one.
type Backend struct{}

var _ core.Backend = (*Backend)(nil)

// Name is "" in this build.
func (b *Backend) Name() string { return "" }

// Device is nil in this build.
func (b *Backend) Device() core.Device { return nil }

// DefaultBufferType is nil in this build.
func (b *Backend) DefaultBufferType() core.BufferType { return nil }

// GraphCompute fails in this build (whatever g, nil included).
func (b *Backend) GraphCompute(g *core.Graph) error { return ErrUnavailable }

// GraphComputeContext fails in this build (whatever ctx and g, nil included).
func (b *Backend) GraphComputeContext(ctx context.Context, g *core.Graph) error {
	return ErrUnavailable
}

// Synchronize fails in this build.
func (b *Backend) Synchronize() error { return ErrUnavailable }

// Close does nothing in this build: there is nothing to release.
func (b *Backend) Close() error { return nil }

// New fails in this build.
func New(i int) (*Backend, error) { return nil, ErrUnavailable }

// ValidationMessages returns nothing in this build.
func ValidationMessages() []string { return nil }

// Shutdown does nothing in this build.
func Shutdown() error { return nil }

// Dispatches returns 0: this build has no Vulkan devices.
func (b *Backend) Dispatches() int { return 0 }

// SetFusion does nothing: this build has no Vulkan devices.
func (b *Backend) SetFusion(on bool) {}

// Replays returns 0: this build has no Vulkan devices.
func (b *Backend) Replays() int { return 0 }

// SetOpProfile does nothing: this build has no Vulkan devices.
func (b *Backend) SetOpProfile(on bool) {}

// OpProfile returns nil: this build has no Vulkan devices.
func (b *Backend) OpProfile() []core.OpTime { return nil }
