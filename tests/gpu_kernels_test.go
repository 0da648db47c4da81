package tests

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// gpuKernelsEnv is gpuops.KernelsEnv: "gpu" makes a software device (lavapipe, llvmpipe) encode
// with the kernels a GPU gets.
const gpuKernelsEnv = "TANDEM_GPU_KERNELS"

// gpuKernelOps are the ops whose GPU encoders choose kernels by the kind of device (the mat-vec
// and tiled MUL_MAT kernels), and MUL_MAT_ID beside them.
var gpuKernelOps = map[core.Op]bool{core.OpMulMat: true, core.OpMulMatID: true}

// usesOps reports whether the graph of c computes one of ops.
func usesOps(c Case, ops map[core.Op]bool) bool {
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	out := c.Build(ctx)
	seen := map[*core.Tensor]bool{}
	var walk func(t *core.Tensor) bool
	walk = func(t *core.Tensor) bool {
		if t == nil || seen[t] {
			return false
		}
		seen[t] = true
		if ops[t.Op] {
			return true
		}
		for _, s := range t.Src {
			if walk(s) {
				return true
			}
		}
		return false
	}
	return out != nil && walk(out)
}

// TestGPUKernelsMulMat runs every case of the op table with a MUL_MAT or MUL_MAT_ID node on every
// device under test with TANDEM_GPU_KERNELS=gpu, so that on lavapipe and llvmpipe the GPUs'
// mat-vec kernel and tiles (which the software devices never pick) are checked against the CPU
// reference, with the seeds TestOps gives the same cases.
func TestGPUKernelsMulMat(t *testing.T) {
	devs := devicesUnderTest()
	if len(devs) == 0 {
		t.Skipf("no device besides the CPU: %s", vulkanWhy())
	}
	t.Setenv(gpuKernelsEnv, "gpu")
	cases := Cases()
	for _, d := range devs {
		be, err := d.NewBackend()
		if err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		unsupported := expectedUnsupported[deviceKind(be.Name())]
		passed := 0
		for i, c := range cases {
			if !usesOps(c, gpuKernelOps) {
				continue
			}
			r := Run(c, be, uint64(i+1))
			switch {
			case r.Passed:
				passed++
			case !r.Supported && r.Problem == "":
				if _, ok := unsupported[c.Name]; !ok {
					t.Errorf("%s %s: unsupported, and not in its expectedUnsupported list", be.Name(), c.Name)
				}
			default:
				t.Errorf("%s %s: %s", be.Name(), c.Name, r.Problem)
			}
		}
		t.Logf("%s (%s): %d MUL_MAT/MUL_MAT_ID cases passed with the GPU kernels", be.Name(), d.Description(), passed)
		if passed == 0 {
			t.Errorf("%s: no MUL_MAT case passed", be.Name())
		}
		be.Close()
	}
}
