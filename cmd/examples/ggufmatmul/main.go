// Command ggufmatmul loads a weight matrix from a GGUF file (package core/gguf) and multiplies it
// with a batch of vectors on the CPU backend, through a scheduler, checking the result against a
// plain Go product.
//
//	go run ./cmd/examples/ggufmatmul                            # writes a seeded 256×64 f32 matrix to a temporary file first
//	go run ./cmd/examples/ggufmatmul -f model.gguf -t output.weight
//
// With -f, the named tensor (f32, f16 or a quantized type) of an existing file is used; otherwise
// the program writes a small GGUF file itself (gguf.WriteFile), the way a model converter would.
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/gguf"
	"github.com/tandem-ml/tandem/scheduler"
)

// config is what the flags set.
type config struct {
	File, Tensor string // an existing file and tensor; "" writes one
	Cols, Rows   int64  // the written matrix: Rows outputs of Cols inputs
	Batch        int64  // vectors multiplied at once
	Dir          string // where the written file goes ("" : a temporary directory)
}

// result is what a run reports (the test checks it).
type result struct {
	Type       core.Type
	Ne         [4]int64
	Out        []float32 // [rows, batch] row-major: Out[j*rows+i] = row i of the weights · vector j
	MaxRelDiff float64   // largest |tandem − Go| / max(1, |Go|)
}

func main() {
	var cfg config
	flag.StringVar(&cfg.File, "f", "", "GGUF file (default: write a seeded one)")
	flag.StringVar(&cfg.Tensor, "t", "weight", "tensor name")
	flag.Int64Var(&cfg.Cols, "cols", 256, "columns of the written matrix")
	flag.Int64Var(&cfg.Rows, "rows", 64, "rows of the written matrix")
	flag.Int64Var(&cfg.Batch, "batch", 8, "vectors per product")
	flag.Parse()
	if _, err := run(os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "ggufmatmul:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, cfg config) (result, error) {
	var res result
	path := cfg.File
	if path == "" {
		dir := cfg.Dir
		if dir == "" {
			d, err := os.MkdirTemp("", "ggufmatmul")
			if err != nil {
				return res, err
			}
			defer os.RemoveAll(d)
			dir = d
		}
		path = filepath.Join(dir, "matrix.gguf")
		if err := writeMatrix(path, cfg.Tensor, cfg.Cols, cfg.Rows); err != nil {
			return res, err
		}
		fmt.Fprintf(w, "wrote %s: %q, f32 %d×%d\n", path, cfg.Tensor, cfg.Rows, cfg.Cols)
	}

	// Open reads the header; Load gives every tensor memory (host memory here, the file mapped
	// where the platform allows) and streams the data in.
	f, err := gguf.Open(path)
	if err != nil {
		return res, err
	}
	defer f.Close()
	m, err := f.Load(nil)
	if err != nil {
		return res, err
	}
	defer m.Close()
	wt := m.Tensor(cfg.Tensor)
	if wt == nil {
		return res, fmt.Errorf("%s has no tensor %q", path, cfg.Tensor)
	}
	if wt.Ne[2] != 1 || wt.Ne[3] != 1 {
		return res, fmt.Errorf("tensor %q is %v: want a matrix", cfg.Tensor, wt.Ne)
	}
	res.Type, res.Ne = wt.Type, wt.Ne
	cols, rows := wt.Ne[0], wt.Ne[1]

	be, err := cpu.New(cpu.Options{})
	if err != nil {
		return res, err
	}
	defer be.Close()
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x := ctx.NewTensor2D(core.TypeF32, cols, cfg.Batch).SetInput().SetName("x")
	y := ctx.MulMat(wt, x).SetOutput() // [rows, batch]
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(y)
	s, err := scheduler.New([]core.Backend{be}, scheduler.Options{})
	if err != nil {
		return res, err
	}
	defer s.Close()
	if err := s.AllocGraph(g); err != nil {
		return res, err
	}
	xv := make([]float32, x.NElements())
	r := rand.New(rand.NewPCG(2, 3))
	for i := range xv {
		xv[i] = r.Float32()*2 - 1
	}
	if err := core.SetFloat32s(x, xv); err != nil {
		return res, err
	}
	if err := s.GraphCompute(g); err != nil {
		return res, err
	}
	if res.Out, err = core.GetFloat32s(y); err != nil {
		return res, err
	}

	// The same product in Go, from the weights as tandem reads them back (dequantized).
	wv, err := core.GetFloat32s(wt)
	if err != nil {
		return res, err
	}
	for j := range cfg.Batch {
		for i := range rows {
			var want float64
			for k := range cols {
				want += float64(wv[i*cols+k]) * float64(xv[j*cols+k])
			}
			d := math.Abs(float64(res.Out[j*rows+i])-want) / math.Max(1, math.Abs(want))
			res.MaxRelDiff = math.Max(res.MaxRelDiff, d)
		}
	}
	fmt.Fprintf(w, "%q: %v [%d, %d] × %d vectors on %s: y[0][0..3] = %.4f; largest relative difference from Go: %.2g\n",
		cfg.Tensor, wt.Type, cols, rows, cfg.Batch, be.Name(), res.Out[:min(4, len(res.Out))], res.MaxRelDiff)
	return res, nil
}

// writeMatrix writes a GGUF file holding one seeded f32 matrix of rows × cols called name.
func writeMatrix(path, name string, cols, rows int64) error {
	ctx := core.NewContext(core.ContextParams{MemSize: 4*cols*rows + 1<<12})
	t := ctx.NewTensor2D(core.TypeF32, cols, rows).SetName(name)
	if err := ctx.Err(); err != nil {
		return err
	}
	v := make([]float32, t.NElements())
	r := rand.New(rand.NewPCG(1, 1))
	for i := range v {
		v[i] = r.Float32() - 0.5
	}
	if err := core.SetFloat32s(t, v); err != nil {
		return err
	}
	var md gguf.Metadata
	if err := md.Set("general.name", "ggufmatmul example"); err != nil {
		return err
	}
	return gguf.WriteFile(path, &md, []*core.Tensor{t})
}
