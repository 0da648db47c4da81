package shaders

import (
	"encoding/binary"
	"os"
	"os/exec"
	"testing"

	"github.com/tandem-ml/tandem/shaders/internal/build"
)

func TestGetAndNames(t *testing.T) {
	names := Names()
	if len(names) != len(build.Variants) {
		t.Fatalf("Names() has %d entries, build.Variants %d", len(names), len(build.Variants))
	}
	for _, v := range build.Variants {
		spv, err := Get(v.Name)
		if err != nil {
			t.Fatal(err)
		}
		if len(spv) < 20 || len(spv)%4 != 0 {
			t.Fatalf("%s: bad SPIR-V length %d", v.Name, len(spv))
		}
		if magic := binary.LittleEndian.Uint32(spv); magic != 0x07230203 {
			t.Fatalf("%s: bad SPIR-V magic %#x", v.Name, magic)
		}
	}
	if _, err := Get("no_such_shader"); err == nil {
		t.Fatal("Get of an unknown name succeeded")
	}
}

// TestSPIRVUpToDate fails when a .comp/.glsl source changed without
// `go generate ./shaders`. It needs no compiler.
func TestSPIRVUpToDate(t *testing.T) {
	problems, err := build.CheckInputs(".", "spv")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestSPIRVRecompile (TANDEM_CHECK_SPIRV=1) recompiles every variant with glslc
// and compares bytes with the committed SPIR-V.
func TestSPIRVRecompile(t *testing.T) {
	if os.Getenv("TANDEM_CHECK_SPIRV") != "1" {
		t.Skip("set TANDEM_CHECK_SPIRV=1 to recompile the shaders and compare")
	}
	glslc := os.Getenv("GLSLC")
	if glslc == "" {
		p, err := exec.LookPath("glslc")
		if err != nil {
			t.Fatal("TANDEM_CHECK_SPIRV=1 but glslc is not on PATH (or set GLSLC)")
		}
		glslc = p
	}
	problems, err := build.CheckCompile(glslc, ".", "spv")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}
