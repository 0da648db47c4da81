package cpu

import (
	"os"

	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"runtime"
	"strings"

	"github.com/tandem-ml/tandem/core"
)

type device struct{}

var theDevice core.Device = device{}

func init() {
	core.Register(core.Registration{Name: "CPU", Devices: func() []core.Device { return []core.Device{theDevice} }})
	// Host memory has no device to ask: weights placed in it may go to CPU_REPACK.
	core.RegisterExtraBufferTypes(core.HostBufferType(), repackBufferType)
}

// NewDevice returns the CPU device (also listed by core.Devices).
func NewDevice() core.Device { return theDevice }

func (device) Name() string { return "CPU" }

func (device) Description() string {
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "model name") {
				if i := strings.IndexByte(line, ':'); i >= 0 {
					return strings.TrimSpace(line[i+1:])
				}
			}
		}
	}
	return runtime.GOARCH + " CPU"
}

func (device) Type() core.DeviceType { return core.DeviceCPU }

func (device) Memory() (free, total int64) {
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && (f[0] == "MemTotal:" || f[0] == "MemAvailable:") {
				var kb int64
				for _, ch := range f[1] {
					kb = kb*10 + int64(ch-'0')
				}
				if f[0] == "MemTotal:" {
					total = kb * 1024
				} else {
					free = kb * 1024
				}
			}
		}
	}
	return free, total
}

// SupportsOp reports whether the CPU can compute t (false for nil).
func (device) SupportsOp(t *core.Tensor) bool { return t != nil && supportsNode(t) }

// SupportsBufferType reports whether bt is host memory or the CPU's repacked weight buffer type
// (false for nil).
func (device) SupportsBufferType(bt core.BufferType) bool {
	return bt != nil && (bt.IsHost() || bt == core.BufferType(repackBufferType))
}

// ExtraBufferTypes lists the CPU's buffer types with a layout of their own: CPU_REPACK
// (RepackBufferType), for Q4_0, Q4_1, Q8_0 and (kernel set avx2) Q4_K MUL_MAT weights.
func (device) ExtraBufferTypes() []core.BufferType {
	return []core.BufferType{repackBufferType}
}

func (device) OffloadOp(*core.Tensor) bool { return false }

func (device) BufferType() core.BufferType { return core.HostBufferType() }

// Features lists the CPU's instruction-set extensions, whether the assembly kernels are in use
// (like ggml_backend_cpu_get_features), and KERNELS: the kernel set that runs (generic, avx2 or
// avx512; TANDEM_CPU_KERNELS caps it, e.g. TANDEM_CPU_KERNELS=avx2 on an AVX-512 machine), and
// BF16_GEMM: 1 where the GEMM multiplies bf16 pairs in hardware (BF16 weights, and F16 ones in
// products at core.PrecBF16).
func (device) Features() []core.Feature {
	var out []core.Feature
	for _, f := range kern.Features() {
		v := "0"
		if f.Enabled {
			v = "1"
		}
		out = append(out, core.Feature{Name: f.Name, Value: v})
	}
	// The kernel set in use: the widest the CPU runs, capped by TANDEM_CPU_KERNELS.
	pairs := "0"
	if kern.HasBF16Pairs() {
		pairs = "1"
	}
	return append(out, core.Feature{Name: "KERNELS", Value: kern.ActiveKernelSet().String()},
		core.Feature{Name: "BF16_GEMM", Value: pairs})
}

func (device) NewBackend() (core.Backend, error) { return New(Options{}) }
