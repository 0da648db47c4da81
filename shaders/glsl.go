package shaders

import (
	"embed"
	"fmt"
	"sort"

	"github.com/tandem-ml/tandem/shaders/internal/build"
)

// The GLSL sources, for backends that compile them at run time (OpenGL has no
// use for the Vulkan SPIR-V). Embedding them changes nothing in spv/.
//
//go:embed *.comp *.glsl
var srcFS embed.FS

// VariantSource describes how a shader variant is built from the GLSL sources:
// the .comp file and the preprocessor definitions ("NAME" or "NAME=VALUE", a
// bare NAME defined empty as glslc -D does) it is compiled with.
type VariantSource struct {
	Name    string
	Source  string
	Defines []string
}

// Source returns the build recipe of the named variant (a name Get accepts).
func Source(name string) (VariantSource, error) {
	i := sort.Search(len(build.Variants), func(i int) bool { return build.Variants[i].Name >= name })
	if i == len(build.Variants) || build.Variants[i].Name != name {
		return VariantSource{}, fmt.Errorf("shaders: no shader named %q", name)
	}
	v := build.Variants[i]
	return VariantSource{Name: v.Name, Source: v.Source, Defines: append([]string(nil), v.Defines...)}, nil
}

// ReadSource returns the text of a GLSL source file of this package (a .comp
// file or a .glsl include, by base name).
func ReadSource(file string) (string, error) {
	b, err := srcFS.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("shaders: no source file %q", file)
	}
	return string(b), nil
}
