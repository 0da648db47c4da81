package gpuops

import (
	"fmt"
	"os"
)

// KernelsEnv names the environment variable that overrides which family of kernels the encoders
// pick where the families differ (MUL_MAT's mat-vec and tiled kernels): "gpu" takes the kernels
// for GPUs even on a software device (lavapipe, llvmpipe), so that tests there run the code a GPU
// runs; "cpu" takes the software devices' kernels on any device; "" or "auto" picks by the device
// (Device.Software). It is read once per graph (Encoder.Start); any other value makes MUL_MAT fail
// with an error naming it.
const KernelsEnv = "TANDEM_GPU_KERNELS"

// softwareKernels reports whether e takes the kernels tuned for software devices, as the device
// and KernelsEnv said when the graph started.
func (e *Encoder) softwareKernels() (bool, error) { return e.soft, e.softErr }

// readKernelsEnv decides the kernel family for the device from KernelsEnv.
func readKernelsEnv(d *Device) (bool, error) {
	switch v := os.Getenv(KernelsEnv); v {
	case "", "auto":
		return d.Software, nil
	case "gpu":
		return false, nil
	case "cpu":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: want gpu, cpu or auto", KernelsEnv, v)
	}
}
