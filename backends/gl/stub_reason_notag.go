//go:build !gl

package gl

const reason = "built without the build tag gl (go build -tags gl links OpenGL and EGL)"
