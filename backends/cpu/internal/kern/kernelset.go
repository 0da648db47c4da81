package kern

import (
	"fmt"
	"os"
	"strings"
)

// KernelSet names a family of kernels chosen by the CPU's features, from the pure-Go twins up
// to the widest assembly the CPU runs. A set runs only on a CPU with all of its features
// (setFeatures); the active set is the widest such set at or below the cap. Sets above AVX-VNNI
// use its 256-bit int8 kernels only where the CPU also has AVX-VNNI (Ice Lake servers and Zen 4
// have AVX-512 VNNI without it).
type KernelSet int

// The kernel sets, narrowest first.
const (
	SetGeneric    KernelSet = iota // pure Go (other architectures, the purego tag, old CPUs)
	SetAVX2                        // AVX2 + FMA + F16C assembly
	SetAVXVNNI                     // adds AVX-VNNI: VEX-encoded 256-bit int8 dot products
	SetAVX512                      // AVX2 plus AVX-512 F/BW/VL/DQ kernels (512-bit SGEMM micro-kernels)
	SetAVX512VNNI                  // adds AVX-512 VNNI integer kernels (512-bit quantized dots)
	SetAVX512BF16                  // adds AVX-512 BF16 (vdpbf16ps dots for bf16 weights)
)

var setNames = [...]string{SetGeneric: "generic", SetAVX2: "avx2", SetAVXVNNI: "avxvnni", SetAVX512: "avx512",
	SetAVX512VNNI: "avx512vnni", SetAVX512BF16: "avx512bf16"}

// String is the set's name as TANDEM_CPU_KERNELS spells it.
func (s KernelSet) String() string {
	if s >= 0 && int(s) < len(setNames) {
		return setNames[s]
	}
	return fmt.Sprintf("KernelSet(%d)", int(s))
}

// ParseKernelSet reads a set name ("generic" or "purego", "avx2", "avxvnni", "avx512",
// "avx512vnni", "avx512bf16"), case-insensitively.
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
	return SetGeneric, fmt.Errorf("kern: unknown kernel set %q (want generic, avx2, avxvnni, avx512, avx512vnni or avx512bf16)", name)
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
	case useBF16:
		return SetAVX512BF16
	case useVNNI:
		return SetAVX512VNNI
	case use512:
		return SetAVX512
	case useAVXVNNI:
		return SetAVXVNNI
	case useASM:
		return SetAVX2
	}
	return SetGeneric
}

// DetectedKernelSet is the widest set this CPU and build could run, ignoring the cap.
func DetectedKernelSet() KernelSet { return detected }

// SupportedKernelSets lists every set this CPU and build can run, narrowest first (a CPU with
// AVX-512 but not AVX-VNNI skips avxvnni).
func SupportedKernelSets() []KernelSet {
	var out []KernelSet
	for s := SetGeneric; s <= detected; s++ {
		if setRuns(s) {
			out = append(out, s)
		}
	}
	return out
}

// widestRunnable is the widest set at or below limit that setRuns accepts.
func widestRunnable(limit KernelSet) KernelSet {
	for s := limit; s > SetGeneric; s-- {
		if setRuns(s) {
			return s
		}
	}
	return SetGeneric
}
