package tests

import (
	"github.com/tandem-ml/tandem/backends/gl"
)

// glWhy says why no OpenGL device is present (always, in a build without the tag gl).
func glWhy() string {
	if ok, why := gl.Available(); !ok {
		return why
	}
	return "OpenGL is available but registered no device"
}
