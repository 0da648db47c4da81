//go:build !gl || !cgo

package gl

import (
	"context"
	"errors"
	"log/slog"

	"github.com/tandem-ml/tandem/core"
)

// ErrUnavailable is returned by New when OpenGL cannot be used.
var ErrUnavailable = errors.New("tandem: gl: " + reason)

// Available reports whether a usable OpenGL device exists; it never does in this build.
func Available() (bool, string) { return false, reason }

// Devices returns the usable OpenGL devices: none in this build.
func Devices() []core.Device { return nil }

// Backend is the OpenGL backend; this build cannot create one.
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

// SetLogger does nothing in this build.
func (b *Backend) SetLogger(*slog.Logger) {}

// New fails in this build, for every device index i.
func New(i int) (*Backend, error) { return nil, ErrUnavailable }
