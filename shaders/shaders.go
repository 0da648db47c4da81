// Package shaders holds tandem's GLSL compute shaders and their SPIR-V.
//
// The sources (*.comp, with shared includes *.glsl) are compiled by glslc into
// spv/<variant>.spv by `go generate ./shaders`; the variants (source + defines)
// are listed in internal/build. The .spv files are committed and embedded, so
// building tandem never needs glslc. spv/manifest.txt records hashes of every
// variant's inputs and output; the package test fails when it is stale, and
// `go run ./shaders/internal/check` (or TANDEM_CHECK_SPIRV=1 go test ./shaders)
// also recompiles and compares bytes.
package shaders

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed spv/*.spv
var spvFS embed.FS

var (
	blobs = map[string][]byte{}
	names []string
)

func init() {
	entries, err := fs.ReadDir(spvFS, "spv")
	if err != nil {
		panic("shaders: reading embedded spv: " + err.Error())
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".spv")
		if !ok {
			continue
		}
		data, err := spvFS.ReadFile("spv/" + e.Name())
		if err != nil {
			panic("shaders: reading embedded " + e.Name() + ": " + err.Error())
		}
		blobs[name] = data
		names = append(names, name)
	}
	sort.Strings(names)
}

// Get returns the SPIR-V of the named shader variant (e.g. "add_f32",
// "mul_mat_vec_q4_0_f32"). The returned slice is shared: do not modify it.
func Get(name string) ([]byte, error) {
	b, ok := blobs[name]
	if !ok {
		return nil, fmt.Errorf("shaders: no shader named %q", name)
	}
	return b, nil
}

// Names returns the names of all embedded shader variants, sorted.
func Names() []string {
	return append([]string(nil), names...)
}
