//go:build !cgo || novulkan

package vulkan

import "log/slog"

// SetLogger does nothing in this build, whatever the logger (nil included) and the backend (a nil
// one too): there is no Vulkan backend to report on.
func (b *Backend) SetLogger(*slog.Logger) {}
