package kern

import (
	"fmt"
	"os"
	"strings"
)

// KernelSet names a family of kernels chosen by the CPU's features, from the pure-Go twins up
// to the widest assembly the CPU runs. Each set includes the ones below it.
type KernelSet int

// The kernel sets, narrowest first.
const (
	SetGeneric    KernelSet = iota // pure Go (other architectures, the purego tag, old CPUs)
	SetAVX2                        // AVX2 + FMA + F16C assembly
	SetAVX512                      // adds AVX-512 F/BW/VL/DQ kernels (512-bit SGEMM micro-kernels)
	SetAVX512VNNI                  // adds AVX-512 VNNI integer kernels (quantized dots; Q4_0 mat-vec with VBMI)
)

var setNames = [...]string{SetGeneric: "generic", SetAVX2: "avx2", SetAVX512: "avx512", SetAVX512VNNI: "avx512vnni"}

// String is the set's name as TANDEM_CPU_KERNELS spells it.
func (s KernelSet) String() string {
	if s >= 0 && int(s) < len(setNames) {
		return setNames[s]
	}
	return fmt.Sprintf("KernelSet(%d)", int(s))
}

// ParseKernelSet reads a set name ("generic" or "purego", "avx2", "avx512", "avx512vnni"),
// case-insensitively.
func ParseKernelSet(name string) (KernelSet, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "purego" || n == "go" {
		return SetGeneric, nil
	}
	for s, sn := range setNames {
		if n == sn {
			return KernelSet(s), nil
		}
	}
	return SetGeneric, fmt.Errorf("kern: unknown kernel set %q (want generic, avx2, avx512 or avx512vnni)", name)
}

// KernelCapEnv caps the kernel set for the whole process (read once, at start-up): a machine
// with AVX-512 runs its AVX2 kernels with TANDEM_CPU_KERNELS=avx2, and generic forces the pure-Go
// twins. A value the CPU cannot honour is capped at what it has.
const KernelCapEnv = "TANDEM_CPU_KERNELS"

// capErr records an unreadable TANDEM_CPU_KERNELS value; KernelSetError reports it.
var capErr error

// capFromEnv returns the cap the environment asks for (the widest set when unset or invalid).
func capFromEnv() KernelSet {
	v, ok := os.LookupEnv(KernelCapEnv)
	if !ok || strings.TrimSpace(v) == "" {
		return KernelSet(len(setNames) - 1)
	}
	s, err := ParseKernelSet(v)
	if err != nil {
		capErr = fmt.Errorf("%s=%q: %w", KernelCapEnv, v, err)
		return KernelSet(len(setNames) - 1)
	}
	return s
}

// KernelSetError is non-nil when TANDEM_CPU_KERNELS held a value that names no kernel set; the
// widest set the CPU supports is used then.
func KernelSetError() error { return capErr }

// ActiveKernelSet is the set in use: the widest the CPU and the build support, capped by
// TANDEM_CPU_KERNELS.
func ActiveKernelSet() KernelSet {
	switch {
	case useVNNI:
		return SetAVX512VNNI
	case use512:
		return SetAVX512
	case useASM:
		return SetAVX2
	}
	return SetGeneric
}

// DetectedKernelSet is the widest set this CPU and build could run, ignoring the cap.
func DetectedKernelSet() KernelSet { return detected }
