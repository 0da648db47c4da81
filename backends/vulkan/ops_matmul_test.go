//go:build cgo && !novulkan

package vulkan

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/backends/internal/gpuops"
	"github.com/tandem-ml/tandem/core"
)

// withMulMat makes be encode MUL_MAT nodes with kernel k (and tile) for the rest of the test, so
// a kernel is proven whatever the default choice for the shape is.
func withMulMat(t *testing.T, be *Backend, k gpuops.MulMatKernel, tile gpuops.Tile) {
	be.sh.Encoder().UseMulMat(k, tile)
	t.Cleanup(func() { be.sh.Encoder().UseMulMat(gpuops.MulMatAuto, gpuops.Tile{}) })
}

// mulMatShape is one MUL_MAT test: a [k, m, a2, a3], b [k, n, b2, b3].
type mulMatShape struct {
	name                string
	k, m, n             int64
	a2, a3, b2, b3      int64
	permutedB, stridedB bool
}

// refMulMat computes MUL_MAT in float64 from the values as stored.
func refMulMat(av, bv []float32, s mulMatShape) []float64 {
	out := make([]float64, 0, s.m*s.n*s.b2*s.b3)
	for i3 := range s.b3 {
		for i2 := range s.b2 {
			ab := ((i3/(s.b3/s.a3))*s.a2 + i2/(s.b2/s.a2)) * s.m * s.k
			bb := (i3*s.b2 + i2) * s.n * s.k
			for col := range s.n {
				for row := range s.m {
					var sum float64
					for i := range s.k {
						sum += float64(av[ab+row*s.k+i]) * float64(bv[bb+col*s.k+i])
					}
					out = append(out, sum)
				}
			}
		}
	}
	return out
}

// runMulMat builds MUL_MAT for shape s and weight type typ, computes it with
// the registered encoder and checks it against refMulMat.
func runMulMat(t *testing.T, be *Backend, typ core.Type, s mulMatShape, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, uint64(typ)))
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor4D(typ, s.k, s.m, s.a2, s.a3)
	var x, src *core.Tensor
	switch {
	case s.permutedB:
		// Batch-major storage [k, b2, n, b3] viewed as [k, n, b2, b3].
		src = ctx.NewTensor4D(core.TypeF32, s.k, s.b2, s.n, s.b3)
		x = ctx.Permute(src, 0, 2, 1, 3)
	case s.stridedB:
		// Padded rows and a start that is not 16-byte aligned.
		src = ctx.NewTensor4D(core.TypeF32, s.k+5, s.n, s.b2, s.b3)
		x = ctx.View4D(src, s.k, s.n, s.b2, s.b3, src.Nb[1], src.Nb[2], src.Nb[3], 3*4)
	default:
		x = ctx.NewTensor4D(core.TypeF32, s.k, s.n, s.b2, s.b3)
		src = x
	}
	out := ctx.MulMat(a, x)
	allocCtx(t, ctx, be.DefaultBufferType())
	if !be.Device().SupportsOp(out) {
		t.Fatalf("MUL_MAT %v %s not supported", typ, s.name)
	}
	av := randomize(t, r, a, -1, 1)
	randomize(t, r, src, -1, 1)
	xv, err := core.GetFloat32s(x)
	if err != nil {
		t.Fatal(err)
	}
	if err := core.TensorMemset(out, 0xff, 0, out.NBytes()); err != nil { // NaN where nothing is written
		t.Fatal(err)
	}
	compute(t, be, out)
	got, err := core.GetFloat32s(out)
	if err != nil {
		t.Fatal(err)
	}
	if e := nmse(got, refMulMat(av, xv, s)); !(e < 1e-9) {
		t.Fatalf("NMSE %g", e)
	}
}

var mulMatShapes = []mulMatShape{
	{name: "one tile", k: 64, m: 32, n: 32, a2: 1, a3: 1, b2: 1, b3: 1},
	{name: "odd", k: 96, m: 67, n: 45, a2: 1, a3: 1, b2: 1, b3: 1},
	{name: "narrow", k: 32, m: 5, n: 3, a2: 1, a3: 1, b2: 1, b3: 1},
	{name: "broadcast", k: 64, m: 33, n: 17, a2: 2, a3: 1, b2: 6, b3: 2},
	{name: "broadcast3", k: 32, m: 9, n: 70, a2: 1, a3: 2, b2: 2, b3: 4},
	{name: "permuted b", k: 64, m: 19, n: 23, a2: 3, a3: 1, b2: 3, b3: 1, permutedB: true},
	{name: "strided b", k: 96, m: 41, n: 66, a2: 1, a3: 1, b2: 2, b3: 1, stridedB: true},
}

// Float weights also take K that are not multiples of 32 or 4.
var mulMatShapesFloat = []mulMatShape{
	{name: "k=37", k: 37, m: 66, n: 70, a2: 1, a3: 1, b2: 1, b3: 1},
	{name: "k=3", k: 3, m: 7, n: 9, a2: 1, a3: 1, b2: 2, b3: 1},
	{name: "k=70 strided", k: 70, m: 31, n: 33, a2: 2, a3: 1, b2: 2, b3: 1, stridedB: true},
}

// TestMulMatTiled runs every shape through the tiled kernel with the tile
// this device gets (encodeMulMatTiled), then a few shapes through each GPU
// tile (on llvmpipe the default tiles are the CPU ones). Each (type, tile,
// alignment) is a pipeline that llvmpipe compiles in 0.3 to 1.5 s, so the
// second part stays small.
func TestMulMatTiled(t *testing.T) {
	be := newBackend(t)
	t.Run("default", func(t *testing.T) {
		withMulMat(t, be, gpuops.MulMatTiled, gpuops.Tile{})
		for _, typ := range gpuops.MulMatTypes() {
			shapes := mulMatShapes
			if typ == core.TypeF32 || typ == core.TypeF16 {
				shapes = append(append([]mulMatShape(nil), shapes...), mulMatShapesFloat...)
			}
			for i, s := range shapes {
				if bs := typ.BlockSize(); s.k%bs != 0 {
					s.k = (s.k + bs - 1) / bs * bs // K-quant super-blocks: round K up to 256
				}
				t.Run(fmt.Sprintf("%v/%s", typ, s.name), func(t *testing.T) { runMulMat(t, be, typ, s, uint64(i)) })
			}
		}
	})
	ran := 0
	for _, tile := range gpuops.GPUTiles {
		if !be.dev.gpu.FitTile(tile) {
			// Only a tile beyond Vulkan's required minimum limits (128 invocations per workgroup
			// and in x, 16 KiB of shared memory) may be refused; the smaller ones must run
			// everywhere, or MUL_MAT would have no tiled kernel on some conformant device.
			if tile.WG() <= 128 && tile.Shared() <= 16384 {
				t.Errorf("tile %+v (%d invocations, %d bytes shared) is within Vulkan's minimum limits but does not fit", tile, tile.WG(), tile.Shared())
			}
			continue
		}
		ran++
		t.Run(fmt.Sprintf("%dx%d/%dx%d", tile.BM, tile.BN, tile.TM, tile.TN), func(t *testing.T) {
			withMulMat(t, be, gpuops.MulMatTiledWith, tile)
			for _, typ := range []core.Type{core.TypeF16, core.TypeQ4_1} {
				for i, s := range []mulMatShape{mulMatShapes[1], mulMatShapes[3], mulMatShapes[6], mulMatShapesFloat[0]} {
					if s.k%32 != 0 && typ.IsQuantized() {
						continue
					}
					t.Run(fmt.Sprintf("%v/%s", typ, s.name), func(t *testing.T) { runMulMat(t, be, typ, s, uint64(i)) })
				}
			}
		})
	}
	if ran < 2 {
		t.Errorf("%d GPU tiles ran, want at least the two within the minimum limits", ran)
	}
}

// TestMulMatDispatch runs MUL_MAT through the default kernel choice (mat-vec up to 8
// columns, tiled above) on both sides of the switch.
func TestMulMatDispatch(t *testing.T) {
	be := newBackend(t)
	for _, typ := range []core.Type{core.TypeF32, core.TypeQ4_0} {
		for _, n := range []int64{1, 8, 9, 33, 100} {
			s := mulMatShape{name: fmt.Sprint(n), k: 64, m: 40, n: n, a2: 1, a3: 1, b2: 2, b3: 1}
			t.Run(fmt.Sprintf("%v/n=%d", typ, n), func(t *testing.T) { runMulMat(t, be, typ, s, uint64(n)) })
		}
	}
}
