package gl

import (
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/shaders"
)

// Every shader variant translates, and what GL cannot take is gone from the result.
func TestTranslateEveryVariant(t *testing.T) {
	for _, name := range shaders.Names() {
		src, err := glSource(name, []uint32{64})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(src, "#version 430 core\n") {
			t.Fatalf("%s: does not start with #version 430 core", name)
		}
		for _, bad := range []string{"push_constant", "constant_id", "local_size_x_id", "#extension", "#include", "[[unroll]]", "REDUCE_SUBGROUP "} {
			if strings.Contains(src, bad) {
				t.Errorf("%s: translation still holds %q", name, bad)
			}
		}
		if !strings.Contains(src, "local_size_x = 64") {
			t.Errorf("%s: workgroup size 64 (constant 0) not applied", name)
		}
	}
	if _, err := glSource("no_such_shader", nil); err == nil {
		t.Error("glSource of an unknown shader succeeded")
	}
}

// The 16-bit rewriting, on a hand-written source: declarations become words, loads and stores
// (plain and compound, nested in indices) go through the macros, 32-bit arrays stay.
func TestRewrite16(t *testing.T) {
	src := `layout(std430, binding = 0) readonly buffer A { uint16_t a[]; };
layout(std430, binding = 1) writeonly buffer D { uint16_t d[]; };
layout(std430, binding = 2) buffer F { float f[]; };
layout(push_constant) uniform P { uint n; } p;
layout(constant_id = 1) const uint MODE = 3u;
void main() {
    d[a[1u]] = uint16_t(a[2u] + 1u);
    d[3u] |= a[4u];
    f[0] = float(a[5u] == 7u);
}
`
	got := translate(src, []uint32{32, 9})
	for _, want := range []string{
		"buffer A { uint a_w[]; };",
		"buffer D { uint d_w[]; };", // writeonly dropped: stores are atomics
		"buffer F { float f[]; };",
		"layout(std140, binding = 0) uniform P",
		"const uint MODE = 9u;",
		"d_ST(a_LD(1u), uint16_t(a_LD(2u) + 1u));",
		"d_ST(3u, d_LD(3u) | (a_LD(4u)));",
		"f[0] = float(a_LD(5u) == 7u);",
		"#define a_LD(i) ((a_w[uint(i) >> 1u] >> ((uint(i) & 1u) << 4u)) & 0xFFFFu)",
		"atomicOr(d_w[ti_ >> 1u]",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("translation lacks %q:\n%s", want, got)
		}
	}
}
