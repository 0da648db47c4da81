//go:build amd64 && !purego

package kern

import (
	"reflect"
	"runtime"
	"testing"
)

// kTileWant names the tile kernels [1 row, 4 rows] that set s must pick for each weight type on
// this CPU ("" where the driver runs the row dots).
func kTileWant(s KernelSet) map[string][2]string {
	want := map[string][2]string{}
	switch {
	case s >= SetAVX512VNNI:
		want["q4_K"] = [2]string{"q4kTile1VNNI", "q4kTile4VNNI"}
		want["q5_K"] = [2]string{"q5kTile1VNNI", "q5kTile4VNNI"}
		want["q6_K"] = [2]string{"q6kTile1VNNI", "q6kTile4VNNI"}
		if hasVBMI && hasBMI2 {
			want["iq4_xs"] = [2]string{"iq4xsTile1VNNI", "iq4xsTile4VNNI"}
		}
		if hasVBMI {
			want["iq4_nl"] = [2]string{"iq4nlTile1VNNI", "iq4nlTile4VNNI"}
		}
		if hasVBMI && hasBMI2 {
			return want
		}
	}
	suf := "AVX2"
	if s >= SetAVXVNNI && useAVXVNNI {
		suf = "AVXVNNI"
	}
	if s >= SetAVX2 {
		for name, p := range map[string]string{"q4_K": "q4k", "q5_K": "q5k", "q6_K": "q6k", "iq4_xs": "iq4xs", "iq4_nl": "iq4nl"} {
			sp := suf
			if name == "iq4_nl" {
				sp = "AVX2" // one form for both sets
			}
			if _, ok := want[name]; !ok && (name != "iq4_xs" || hasBMI2) {
				want[name] = [2]string{p + "Tile1" + sp, p + "Tile4" + sp}
			}
		}
	}
	return want
}

// kTileName is the name of kernel f without its package path ("" for nil).
func kTileName(f kTileKernel) string {
	if f == nil {
		return ""
	}
	name := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '.' {
			return name[i+1:]
		}
	}
	return name
}

// TestKQuantTileKernelsBySet: every kernel set this CPU runs picks its own tile kernels (the
// 256-bit ones under avx2, avxvnni and avx512, the 512-bit VNNI ones above).
func TestKQuantTileKernelsBySet(t *testing.T) {
	for _, s := range supportedSets() {
		withSet(s, func() {
			s := ActiveKernelSet() // below s where TANDEM_CPU_KERNELS caps the process
			want := kTileWant(s)
			for name, spec := range kqSpecs {
				k1, k4, _ := spec.kernels()
				got := [2]string{kTileName(k1), kTileName(k4)}
				if got != want[name] {
					t.Errorf("set %v, %s: tile kernels %q, want %q", s, name, got, want[name])
				}
			}
		})
	}
}
