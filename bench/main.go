// Command bench compares tandem's devices on real work. Run it with `go run ./bench`.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"time"

	_ "github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

func main() {
	quick := flag.Bool("quick", false, "small sizes, one repeat: finishes in seconds")
	flag.Parse()
	fmt.Println("tandem bench — devices:")
	devs := core.Devices()
	for _, d := range devs {
		free, total := d.Memory()
		fmt.Printf("  %-10s %-5v %s (%d MiB free of %d MiB)\n", d.Name(), d.Type(), d.Description(), free>>20, total>>20)
		if fl, ok := d.(core.FeatureLister); ok {
			fmt.Print("    features:")
			for _, f := range fl.Features() {
				fmt.Printf(" %s=%s", f.Name, f.Value)
			}
			fmt.Println()
		}
	}
	n := int64(512)
	if *quick {
		n = 128
	}
	for _, d := range devs {
		be, err := d.NewBackend()
		if err != nil {
			fmt.Printf("  %s: cannot start: %v\n", d.Name(), err)
			continue
		}
		dur, err := timeMulMat(be, n, *quick)
		be.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", d.Name(), err)
			os.Exit(1)
		}
		fmt.Printf("MUL_MAT f32 %dx%dx%d on %-8s median %8.3f ms  %7.2f GFLOPS\n", n, n, n, d.Name(),
			float64(dur.Microseconds())/1000, 2*float64(n*n*n)/dur.Seconds()/1e9)
	}
}

// timeMulMat times an n³ f32 matrix product on a backend whose default buffer is host memory.
func timeMulMat(be core.Backend, n int64, quick bool) (time.Duration, error) {
	ctx := core.NewContext(core.ContextParams{MemSize: 3*n*n*4 + 1<<20})
	a := ctx.NewTensor2D(core.TypeF32, n, n)
	b := ctx.NewTensor2D(core.TypeF32, n, n)
	r := rand.New(rand.NewPCG(1, 2))
	for _, t := range []*core.Tensor{a, b} {
		for i, d := 0, t.Float32s(); i < len(d); i++ {
			d[i] = r.Float32()*2 - 1
		}
	}
	c := ctx.MulMat(a, b)
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(c)
	if err := g.Err(); err != nil {
		return 0, err
	}
	reps := 5
	if quick {
		reps = 1
	}
	var times []time.Duration
	for i := 0; i <= reps; i++ {
		start := time.Now()
		if err := be.GraphCompute(g); err != nil {
			return 0, err
		}
		if i > 0 {
			times = append(times, time.Since(start))
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	return times[len(times)/2], nil
}
