package cpu

import (
	"fmt"

	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
)

// mmRoute is how a MUL_MAT node (or one expert pass of a MUL_MAT_ID node) is computed. It is
// decided once per node when the graph is planned (mulMatRouteOf), stored in the plan, and read
// by both the kernel (mulMatPaths) and the scratch sizing (mulMatRouteWork), so the two cannot
// disagree and no kernel falls back to another path at run time.
type mmRoute uint8

// The MUL_MAT routes. The zero value is no route: a kernel handed it panics (an error naming the
// node), never a silent fallback.
const (
	routeNone     mmRoute = iota // not planned
	routeRef                     // reference per-row dots (Options.Reference)
	routeDot                     // per-row vec dots (kern's SIMD dots, the reference for types without)
	routeKTile                   // tiled dots of K-quant and IQ4 weights (kern.KTile)
	routeGemm                    // packed f32 GEMM (kern.Sgemm, SgemmF16A, SgemmBF16) on F32, F16, BF16 weights
	routeQgemm                   // quantized integer GEMM on Q4_0 and Q8_0 weights (kern.GemmQ4_0Q8_0, GemmQ8_0Q8_0)
	routeGemmStd                 // kern.GemmStd: repacked micro-kernels on standard-layout Q4_0, Q4_1, Q8_0 weights
	routeRepacked                // kern.GemmRepacked on weights stored in a CPU_REPACK buffer
	routeKStd                    // kern.GemmQ4_KStd, GemmQ6_KStd: Q4_K and Q6_K weights repacked on the fly for the team GEMM
)

var routeNames = [...]string{routeNone: "none", routeRef: "ref", routeDot: "dot", routeKTile: "ktile",
	routeGemm: "gemm", routeQgemm: "qgemm", routeGemmStd: "gemmstd", routeRepacked: "repacked", routeKStd: "kstd"}

// String is the route's short name, as the route table test spells it.
func (r mmRoute) String() string {
	if int(r) < len(routeNames) {
		return routeNames[r]
	}
	return fmt.Sprintf("mmRoute(%d)", int(r))
}

// team reports whether the route runs as one GEMM per batch on the whole team (its scratch
// follows the converted activations in the work buffer).
func (r mmRoute) team() bool {
	return r == routeGemm || r == routeQgemm || r == routeGemmStd || r == routeRepacked || r == routeKStd
}

// actType is the type in which the route reads the activations of weights of type w: F32 for the
// f32 GEMM of F32 and F16 weights, the weight type's vec-dot type otherwise. Activations of
// another type are converted into the work buffer first.
func (r mmRoute) actType(w core.Type) core.Type {
	if r == routeGemm && w != core.TypeBF16 {
		return core.TypeF32
	}
	return w.VecDotType()
}

// mmKernels is what the kernel set in use offers the route decision; everything else the
// decision reads is the node itself.
type mmKernels struct {
	repack    bool // repacked micro-kernels in assembly (kern.HasRepackKernels): GemmStd is fast from qstdMinN rows
	stdMatVec bool // GemmStd's mat-vec kernels for at most kern.StdMatVecMaxN rows (kern.HasStdMatVec)
	kStd      bool // GemmQ4_KStd's and GemmQ6_KStd's micro-kernels in assembly (kern.HasQ4_KStd, HasQ6_KStd): fast from kstdMinN rows
}

// activeMMKernels is what the active kernel set offers.
func activeMMKernels() mmKernels {
	return mmKernels{repack: kern.HasRepackKernels(), stdMatVec: kern.HasStdMatVec(), kStd: kern.HasQ4_KStd() && kern.HasQ6_KStd()}
}

// gemmStd reports whether n activation rows per batch take kern.GemmStd on standard-layout
// weights: n ≥ qstdMinN where the set has repacked micro-kernels, n ≤ kern.StdMatVecMaxN where
// it has the mat-vec kernels.
func (ks mmKernels) gemmStd(n int64) bool {
	return (ks.repack && n >= qstdMinN) || (ks.stdMatVec && n <= kern.StdMatVecMaxN)
}

// mulMatRouteOf decides how the MUL_MAT node dst runs, for the reference kernels (ref) or the
// fast ones on a kernel set offering ks. This is the one place the route is chosen; the
// conditions, in order:
//   - ref: routeRef.
//   - F32 or F16 weights with F32 activations, or BF16 weights with F32 or BF16 activations, unit
//     element strides, rows a whole number of elements apart and not overlapping, dense f32 dst
//     rows: routeGemm.
//   - Q4_0, Q4_1, Q8_0 or Q4_K weights stored repacked in a CPU_REPACK buffer (the plan reads them in
//     that layout only where repackRouted allows it): routeRepacked.
//   - the same types in the standard layout with whole-block, non-overlapping rows, dense dst rows
//     and a row count ks.gemmStd accepts: routeGemmStd.
//   - Q4_0 or Q8_0 weights, dense dst rows: routeQgemm.
//   - Q4_K or Q6_K weights with rows apart, dense dst rows, at least kstdMinN activation rows per
//     batch, where the kernel set has the micro-kernels of GemmQ4_KStd and GemmQ6_KStd: routeKStd.
//   - K-quant or IQ4 weights with a tiled dot, non-overlapping weight and activation rows, dense
//     dst rows: routeKTile.
//   - anything else: routeDot.
func mulMatRouteOf(dst *core.Tensor, ref bool, ks mmKernels) mmRoute {
	if ref {
		return routeRef
	}
	a, b := dst.Src[0], dst.Src[1]
	denseDst := dst.Nb[0] == 4 && dst.Nb[1]%4 == 0 && dst.Nb[1]/4 >= dst.Ne[0]
	if gemmLayout(dst) {
		return routeGemm
	}
	if _, _, ok := repackedOf(a); ok {
		return routeRepacked
	}
	rowsApart := a.Nb[1] >= a.Type.RowSize(a.Ne[0])
	if _, ok := gemmStdTypeOf(a.Type); ok && ks.gemmStd(b.Ne[1]) && a.Ne[0]%32 == 0 && rowsApart && denseDst {
		return routeGemmStd
	}
	if (a.Type == core.TypeQ4_0 || a.Type == core.TypeQ8_0) && denseDst {
		return routeQgemm
	}
	if kstdOf(a.Type) != nil && ks.kStd && b.Ne[1] >= kstdMinN && denseDst && rowsApart {
		return routeKStd
	}
	if tileDotK(a.Type) != nil && denseDst && rowsApart {
		// Activations of another type are converted into dense rows; their own rows must not overlap.
		vdt := a.Type.VecDotType()
		if b.Type != vdt || b.Nb[1] >= vdt.RowSize(a.Ne[0]) {
			return routeKTile
		}
	}
	return routeDot
}

// gemmLayout reports whether the types and layout of dst allow the packed f32 GEMM: F32 or F16
// weights with F32 activations, or BF16 weights with F32 or BF16 activations (F32 ones are first
// rounded to bf16, ggml's vec-dot type for BF16), unit element strides, dense dst rows, and
// strides that are whole elements.
func gemmLayout(dst *core.Tensor) bool {
	a, b := dst.Src[0], dst.Src[1]
	switch {
	case (a.Type == core.TypeF32 || a.Type == core.TypeF16) && b.Type == core.TypeF32:
	case a.Type == core.TypeBF16 && (b.Type == core.TypeF32 || b.Type == core.TypeBF16):
	default:
		return false
	}
	es, bs := a.Type.Size(), b.Type.Size()
	return a.Nb[0] == es && a.Nb[1]%es == 0 && b.Nb[0] == bs && b.Nb[1]%bs == 0 &&
		dst.Nb[0] == 4 && dst.Nb[1]%4 == 0 && a.Nb[1]/es >= a.Ne[0] && b.Nb[1]/bs >= b.Ne[0] &&
		dst.Nb[1]/4 >= dst.Ne[0]
}

// convBytes is the size of dst's activations converted to the type route reads them in (zero
// when they are read as they are): dense rows at the start of the work buffer.
func convBytes(dst *core.Tensor, route mmRoute) int64 {
	a, b := dst.Src[0], dst.Src[1]
	t := route.actType(a.Type)
	if b.Type == t {
		return 0
	}
	return t.RowSize(b.Ne[0]) * b.NRows()
}

// mulMatRouteWork is the work buffer (bytes) route needs for dst on nTasks workers: the
// converted activations, then, for the team routes, the GEMM's scratch from the next 64-byte
// boundary (with 64 bytes of slack for aligning its address).
func mulMatRouteWork(dst *core.Tensor, route mmRoute, nTasks int) int64 {
	a, b := dst.Src[0], dst.Src[1]
	conv := convBytes(dst, route)
	m, n, k := int(a.Ne[1]), int(b.Ne[1]), int(a.Ne[0])
	var floats int
	switch route {
	case routeGemm:
		floats = kern.SgemmWorkSize(m, n, k, nTasks)
	case routeQgemm:
		floats = kern.QgemmWorkSize(m, n, k, nTasks)
	case routeGemmStd:
		rt, _ := gemmStdTypeOf(a.Type)
		floats = kern.GemmStdWorkSize(rt, m, n, k, nTasks)
	case routeRepacked:
		_, l, _ := repackedOf(a)
		floats = kern.GemmRepackedWorkSize(l.rt, l.m, n, l.k, nTasks)
		if b.NRows() == 1 { // the mat-vec set (computeMulMatVecRepacked) with its prepared row
			floats = kern.GemvRepackedSetWorkSize(l.rt, 1, l.k)
		}
	case routeKStd:
		floats = kstdOf(a.Type).work(m, n, k, nTasks)
	default:
		return conv
	}
	return core.AlignUp(conv, 64) + 4*int64(floats) + 64
}

// mulMatPlan is MUL_MAT's planning: its route and the work that route needs.
func mulMatPlan(dst *core.Tensor, nTasks int, ref bool, ks mmKernels) ([]mmRoute, int64) {
	r := mulMatRouteOf(dst, ref, ks)
	return []mmRoute{r}, mulMatRouteWork(dst, r, nTasks)
}

// mmKey is what the route decisions of a MUL_MAT or MUL_MAT_ID node read of the node and its
// first two sources (types, shapes, strides, whether src0 is a view); a cached plan whose node no
// longer matches its key is planned again. Where src0's memory lives (a CPU_REPACK buffer or
// not) is checked by the repack plan.
type mmKey struct {
	typ    [3]core.Type
	ne, nb [3][4]int64
	view   bool
}

// mmKeyOf is n's key.
func mmKeyOf(n *core.Tensor) mmKey {
	k := mmKey{view: n.Src[0] != nil && n.Src[0].ViewSrc != nil}
	for i, t := range [3]*core.Tensor{n, n.Src[0], n.Src[1]} {
		if t != nil {
			k.typ[i], k.ne[i], k.nb[i] = t.Type, t.Ne, t.Nb
		}
	}
	return k
}
