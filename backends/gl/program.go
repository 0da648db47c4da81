//go:build gl && cgo

package gl

import (
	"fmt"
	"strings"

	"github.com/go-gl/gl/v4.3-core/gl"
)

// program is a linked compute program: one shader variant with its specialization values.
type program struct {
	id       uint32
	name     string
	bindings int
	push     uint32
}

// programKey names a (shader, constants) pair in the cache.
func programKey(name string, spec []uint32) string {
	var sb strings.Builder
	sb.WriteString(name)
	for _, v := range spec {
		fmt.Fprintf(&sb, ",%d", v)
	}
	return sb.String()
}

// program returns the cached program for a shader variant of package shaders, compiling the
// translated GLSL on first use. Runs on the GL thread.
func (t *glThread) program(name string, bindings int, push uint32, spec []uint32) (*program, error) {
	key := programKey(name, spec)
	if p, ok := t.programs[key]; ok {
		return p, nil
	}
	src, err := glSource(name, spec)
	if err != nil {
		return nil, err
	}
	id, err := compileCompute(src)
	if err != nil {
		return nil, fmt.Errorf("compiling shader %s for GL: %w", name, err)
	}
	p := &program{id: id, name: name, bindings: bindings, push: push}
	t.programs[key] = p
	return p, nil
}

// compileCompute compiles and links one compute shader.
func compileCompute(src string) (uint32, error) {
	sh := gl.CreateShader(gl.COMPUTE_SHADER)
	if sh == 0 {
		return 0, fmt.Errorf("glCreateShader failed")
	}
	defer gl.DeleteShader(sh)
	cs, free := gl.Strs(src + "\x00")
	gl.ShaderSource(sh, 1, cs, nil)
	free()
	gl.CompileShader(sh)
	var ok int32
	gl.GetShaderiv(sh, gl.COMPILE_STATUS, &ok)
	if ok == 0 {
		return 0, fmt.Errorf("compile: %s", shaderLog(sh, false))
	}
	p := gl.CreateProgram()
	gl.AttachShader(p, sh)
	gl.LinkProgram(p)
	gl.GetProgramiv(p, gl.LINK_STATUS, &ok)
	if ok == 0 {
		msg := shaderLog(p, true)
		gl.DeleteProgram(p)
		return 0, fmt.Errorf("link: %s", msg)
	}
	return p, nil
}

func shaderLog(id uint32, isProgram bool) string {
	var n int32
	if isProgram {
		gl.GetProgramiv(id, gl.INFO_LOG_LENGTH, &n)
	} else {
		gl.GetShaderiv(id, gl.INFO_LOG_LENGTH, &n)
	}
	if n <= 1 {
		return "(no log)"
	}
	buf := make([]uint8, n)
	if isProgram {
		gl.GetProgramInfoLog(id, n, nil, &buf[0])
	} else {
		gl.GetShaderInfoLog(id, n, nil, &buf[0])
	}
	return strings.TrimSpace(string(buf[:n-1]))
}
