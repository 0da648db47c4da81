// Command check fails (exit status 1) when the committed SPIR-V of package
// shaders is stale. Run it from the repository root or the shaders directory:
//
//	go run ./shaders/internal/check [-dir shaders] [-glslc path] [-require-glslc] [-nocompile]
//
// It always checks the manifest's input hashes against the current sources (no
// compiler needed). When glslc is available (flag, $GLSLC or PATH) it also
// regenerates every shader into a temporary directory and compares bytes;
// -require-glslc makes a missing glslc an error, -nocompile skips that step.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/tandem-ml/tandem/shaders/internal/build"
)

func main() {
	dir := flag.String("dir", "", "shaders directory (default: ./shaders if it exists, else .)")
	glslc := flag.String("glslc", os.Getenv("GLSLC"), "glslc binary (default: $GLSLC, then glslc on PATH)")
	require := flag.Bool("require-glslc", false, "fail when glslc is not available")
	nocompile := flag.Bool("nocompile", false, "only check the manifest's input hashes")
	flag.Parse()
	if *dir == "" {
		*dir = "."
		if _, err := os.Stat(filepath.Join("shaders", "binary.comp")); err == nil {
			*dir = "shaders"
		}
	}
	spv := filepath.Join(*dir, "spv")
	problems, err := build.CheckInputs(*dir, spv)
	if err != nil {
		fail(err)
	}
	compiled := false
	if !*nocompile {
		if *glslc == "" {
			if p, err := exec.LookPath("glslc"); err == nil {
				*glslc = p
			}
		}
		switch {
		case *glslc != "":
			more, err := build.CheckCompile(*glslc, *dir, spv)
			if err != nil {
				fail(err)
			}
			problems = append(problems, more...)
			compiled = true
		case *require:
			fail(fmt.Errorf("glslc not found and -require-glslc given"))
		}
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "stale:", p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
	how := "input hashes"
	if compiled {
		how += " and byte-exact recompilation"
	}
	fmt.Printf("check: %d shader variants up to date (%s)\n", len(build.Variants), how)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "check:", err)
	os.Exit(2)
}
