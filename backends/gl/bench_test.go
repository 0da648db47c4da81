//go:build gl && cgo

package gl

import (
	"os"
	"testing"

	"github.com/tandem-ml/tandem/backends/internal/gputest"
	"github.com/tandem-ml/tandem/core"
)

// Op benchmarks: MUL_MAT (tiled and mat-vec) in GFLOPS, and the per-dispatch
// cost of a long elementwise graph. Run, on a quiet machine:
//
//	go test -tags gl ./backends/gl -run '^$' -bench 'MulMat|AddChain' -benchtime 5x
//
// TANDEM_LONG=1 adds m=4096 n=512 k=14336 q4_0 (about 60 GFLOP per run).

// benchBackend opens the device for a benchmark, skipping without one.
func benchBackend(b *testing.B) *Backend {
	if ok, why := Available(); !ok {
		b.Skip(why)
	}
	be, err := New(0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { be.Close() })
	return be
}

func benchMulMat(b *testing.B, typ core.Type, m, n, k int64) {
	gputest.BenchMulMat(b, benchBackend(b), typ, m, n, k)
}

func BenchmarkMulMatF32_256(b *testing.B)  { benchMulMat(b, core.TypeF32, 256, 256, 256) }
func BenchmarkMulMatQ4_0_256(b *testing.B) { benchMulMat(b, core.TypeQ4_0, 256, 256, 256) }

func BenchmarkMulMatVecF32_4096(b *testing.B)  { benchMulMat(b, core.TypeF32, 4096, 1, 4096) }
func BenchmarkMulMatVecQ4_0_4096(b *testing.B) { benchMulMat(b, core.TypeQ4_0, 4096, 1, 4096) }

// BenchmarkMulMatQ4_0Long is a prompt-sized feed-forward product, m=4096
// n=512 k=14336 .
func BenchmarkMulMatQ4_0Long(b *testing.B) {
	if os.Getenv("TANDEM_LONG") != "1" {
		b.Skip("set TANDEM_LONG=1 (about 60 GFLOP per iteration)")
	}
	benchMulMat(b, core.TypeQ4_0, 4096, 512, 14336)
}

// BenchmarkAddChain100 runs a graph of 100 dependent ADDs on 4096 floats: the cost per dispatch
// of recording, barriers, submission and the wait.
func BenchmarkAddChain100(b *testing.B) { gputest.BenchAddChain(b, benchBackend(b), 100) }
