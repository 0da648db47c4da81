//go:build cgo && !novulkan

package vulkan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/internal/gpuops"
	"github.com/tandem-ml/tandem/core"
)

// matVecShapes are mat-vec products (n <= 8) for the GPUs' mat-vec kernel: one row, K over two
// whole workgroup steps plus a remainder, broadcast batches, permuted B, and a B whose rows are
// padded and start off a 16-byte boundary (read element by element). K is rounded up to the block
// size of each type.
var matVecShapes = []mulMatShape{
	{name: "one row", k: 256, m: 1, n: 1, a2: 1, a3: 1, b2: 1, b3: 1},
	{name: "k=4352", k: 4352, m: 37, n: 1, a2: 1, a3: 1, b2: 1, b3: 1},
	{name: "broadcast n=3", k: 512, m: 9, n: 3, a2: 2, a3: 1, b2: 4, b3: 1},
	{name: "permuted b", k: 256, m: 7, n: 2, a2: 3, a3: 1, b2: 3, b3: 1, permutedB: true},
	{name: "strided b", k: 2304, m: 5, n: 2, a2: 1, a3: 1, b2: 2, b3: 1, stridedB: true},
}

// matVecShapesFloat are K that are not multiples of 4 for the float weight types.
var matVecShapesFloat = []mulMatShape{
	{name: "k=37", k: 37, m: 33, n: 1, a2: 1, a3: 1, b2: 1, b3: 1},
	{name: "k=4099", k: 4099, m: 5, n: 1, a2: 1, a3: 1, b2: 1, b3: 1},
	{name: "k=70 strided", k: 70, m: 9, n: 2, a2: 2, a3: 1, b2: 2, b3: 1, stridedB: true},
}

// runMatVecTypes runs matVecShapes (and matVecShapesFloat for f32/f16/bf16) for every MUL_MAT
// weight type through whatever MUL_MAT kernel be is set to.
func runMatVecTypes(t *testing.T, be *Backend, types []core.Type) {
	for _, typ := range types {
		shapes := matVecShapes
		if !typ.IsQuantized() {
			shapes = append(append([]mulMatShape(nil), shapes...), matVecShapesFloat...)
		}
		for i, s := range shapes {
			if bs := typ.BlockSize(); s.k%bs != 0 {
				s.k = (s.k + bs - 1) / bs * bs
			}
			t.Run(fmt.Sprintf("%v/%s", typ, s.name), func(t *testing.T) { runMulMat(t, be, typ, s, uint64(i)) })
		}
	}
}

// TestMulMatVecGPU runs the GPUs' mat-vec kernel (mul_mat_vec.comp, which software devices never
// pick) with TANDEM_GPU_KERNELS=gpu on every weight type, with the device's grid and with one
// workgroup per dimension (the grid-stride loops), then a few types with other workgroup sizes
// and rows per workgroup.
func TestMulMatVecGPU(t *testing.T) {
	t.Setenv(gpuops.KernelsEnv, "gpu")
	be := newBackend(t)
	withMulMat(t, be, gpuops.MulMatVec, gpuops.Tile{})
	runMatVecTypes(t, be, gpuops.MulMatTypes())
	t.Run("one group", func(t *testing.T) {
		t.Cleanup(LimitGroupsForTest(be, [3]uint32{1, 1, 1}))
		runMatVecTypes(t, be, []core.Type{core.TypeF16, core.TypeQ4_0, core.TypeQ6_K})
	})
	// 1030 rows: the block types take four rows per workgroup.
	t.Run("m=1030", func(t *testing.T) {
		for _, typ := range []core.Type{core.TypeF16, core.TypeQ4_0, core.TypeQ8_0, core.TypeQ6_K} {
			s := mulMatShape{name: "m=1030", k: 256, m: 1030, n: 1, a2: 1, a3: 1, b2: 1, b3: 1}
			t.Run(typ.String(), func(t *testing.T) { runMulMat(t, be, typ, s, 1) })
		}
	})
	// Other workgroup sizes and rows per workgroup than the device's (M not a multiple of the
	// rows; several subgroups per workgroup where the subgroup is narrower).
	types := []core.Type{core.TypeF32, core.TypeF16, core.TypeBF16, core.TypeQ4_0, core.TypeQ8_0, core.TypeQ4_K}
	for _, c := range [][2]uint32{{32, 3}, {64, 4}, {128, 2}} {
		t.Run(fmt.Sprintf("wg=%d rows=%d", c[0], c[1]), func(t *testing.T) {
			be.sh.Encoder().UseMulMatVec(c[0], c[1])
			runMatVecTypes(t, be, types)
		})
	}
}

// TestGPUKernelsEnvBad: a TANDEM_GPU_KERNELS value that is none of its words fails MUL_MAT with
// an error naming the variable.
func TestGPUKernelsEnvBad(t *testing.T) {
	t.Setenv(gpuops.KernelsEnv, "fast")
	be := newBackend(t)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	out := ctx.MulMat(ctx.NewTensor2D(core.TypeF32, 32, 4), ctx.NewTensor2D(core.TypeF32, 32, 1))
	allocCtx(t, ctx, be.DefaultBufferType())
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(out)
	err := be.GraphCompute(g)
	if err == nil || !strings.Contains(err.Error(), `TANDEM_GPU_KERNELS="fast"`) {
		t.Fatalf("GraphCompute with TANDEM_GPU_KERNELS=fast: %v", err)
	}
}
