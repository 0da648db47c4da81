package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// The example on a small written file: the product has the matrix's shape and matches Go's.
func TestGGUFMatmul(t *testing.T) {
	var out bytes.Buffer
	res, err := run(&out, config{Tensor: "weight", Cols: 64, Rows: 16, Batch: 3, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	if res.Type != core.TypeF32 || res.Ne != [4]int64{64, 16, 1, 1} || len(res.Out) != 16*3 {
		t.Fatalf("loaded %v %v, %d outputs", res.Type, res.Ne, len(res.Out))
	}
	if !(res.MaxRelDiff < 1e-5) {
		t.Errorf("largest relative difference from Go %.3g", res.MaxRelDiff)
	}
	// An existing file (-f) and a tensor it lacks: an error naming it.
	dir := t.TempDir()
	if _, err := run(&out, config{Tensor: "w", Cols: 32, Rows: 2, Batch: 1, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	_, err = run(&out, config{File: filepath.Join(dir, "matrix.gguf"), Tensor: "nosuch", Batch: 1})
	if err == nil || !strings.Contains(err.Error(), `no tensor "nosuch"`) {
		t.Errorf("a missing tensor: %v", err)
	}
}
