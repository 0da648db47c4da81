// Command gen compiles the shaders of package shaders to SPIR-V with glslc.
// It is run by `go generate ./shaders` (from the shaders directory):
//
//	go run ./internal/gen [-glslc path] [-src dir] [-out dir]
//
// The glslc binary defaults to $GLSLC, then glslc on PATH.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"

	"github.com/tandem-ml/tandem/shaders/internal/build"
)

func main() {
	glslc := flag.String("glslc", os.Getenv("GLSLC"), "glslc binary (default: $GLSLC, then glslc on PATH)")
	src := flag.String("src", ".", "directory holding the .comp and .glsl sources")
	out := flag.String("out", "spv", "output directory for .spv files and the manifest")
	flag.Parse()
	if *glslc == "" {
		p, err := exec.LookPath("glslc")
		if err != nil {
			fmt.Fprintln(os.Stderr, "gen: glslc not found (install shaderc/glslc or set GLSLC)")
			os.Exit(1)
		}
		*glslc = p
	}
	if err := build.Generate(*glslc, *src, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	fmt.Printf("gen: %d shader variants in %s\n", len(build.Variants), *out)
}
