//go:build gl && !cgo

package gl

const reason = "built without cgo (CGO_ENABLED=0); the OpenGL backend needs cgo"
