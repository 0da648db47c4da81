package cpu

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/cpuid/v2"
	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
)

// routeSet is a kernel set, on a CPU with or without AVX-512 VBMI, and what it offers MUL_MAT.
type routeSet struct {
	name string // TANDEM_CPU_KERNELS's name, "+vbmi" on a CPU with AVX-512 VBMI
	set  kern.KernelSet
	vbmi bool
	ks   mmKernels
}

// routeSets says what each kernel set offers the MUL_MAT route decision. GemmStd's mat-vec
// kernels need AVX-512 VNNI and VBMI (Ice Lake, Sapphire Rapids, Zen 4 have VBMI; Cascade Lake
// and Cooper Lake do not), so the two widest sets appear with and without VBMI.
var routeSets = []routeSet{
	{"generic", kern.SetGeneric, false, mmKernels{}},
	{"avx2", kern.SetAVX2, false, mmKernels{repack: true, kStd: true}},
	{"avxvnni", kern.SetAVXVNNI, false, mmKernels{repack: true, kStd: true}},
	{"avx512", kern.SetAVX512, false, mmKernels{repack: true, kStd: true}},
	{"avx512vnni", kern.SetAVX512VNNI, false, mmKernels{repack: true, kStd: true}},
	{"avx512vnni+vbmi", kern.SetAVX512VNNI, true, mmKernels{repack: true, stdMatVec: true, kStd: true}},
	{"avx512bf16", kern.SetAVX512BF16, false, mmKernels{repack: true, kStd: true}},
	{"avx512bf16+vbmi", kern.SetAVX512BF16, true, mmKernels{repack: true, stdMatVec: true, kStd: true}},
}

// routeNs are the activation rows (src1 rows per batch) of the route table's columns.
var routeNs = []int64{1, 2, 3, 4, 5, 16, 512}

// mmLayout is where a MUL_MAT's weights are stored.
type mmLayout int

const (
	layoutStd    mmLayout = iota // a host buffer, ggml's standard layout
	layoutRepack                 // a CPU_REPACK buffer (repacked for Q4_0, Q4_1, Q8_0, as-is otherwise)
)

func (l mmLayout) String() string { return [...]string{"std", "CPU_REPACK"}[l] }

// Shorthands of the route table: every set, and the sets without and with GemmStd's mat-vecs.
const (
	allSets   = "generic avx2 avxvnni avx512 avx512vnni avx512vnni+vbmi avx512bf16 avx512bf16+vbmi"
	repackSet = "avx2 avxvnni avx512 avx512vnni avx512bf16"
	matVecSet = "avx512vnni+vbmi avx512bf16+vbmi"
)

// mulMatRouteTable is the route of a MUL_MAT of each weight type (k = 256 elements per row, 32
// rows), layout and kernel set against f32 activations of n rows (routeNs), dense f32 dst rows.
// Each (type, layout, set) has exactly one row. A change of route, a slow path taking over from
// a fast one in particular, fails TestMulMatRouteTable until this table says so.
var mulMatRouteTable = []struct {
	typ    core.Type
	layout mmLayout
	sets   string // the sets the row is for, separated by spaces
	routes string // the route for each of routeNs, separated by spaces
}{
	// f32 GEMM for the float types, whatever n and set; CPU_REPACK stores them as they are.
	{core.TypeF32, layoutStd, allSets, "gemm gemm gemm gemm gemm gemm gemm"},
	{core.TypeF32, layoutRepack, allSets, "gemm gemm gemm gemm gemm gemm gemm"},
	{core.TypeF16, layoutStd, allSets, "gemm gemm gemm gemm gemm gemm gemm"},
	{core.TypeF16, layoutRepack, allSets, "gemm gemm gemm gemm gemm gemm gemm"},
	{core.TypeBF16, layoutStd, allSets, "gemm gemm gemm gemm gemm gemm gemm"},
	{core.TypeBF16, layoutRepack, allSets, "gemm gemm gemm gemm gemm gemm gemm"},

	// Q4_0 and Q8_0: the quantized GEMM where GemmStd is not fast (the pure-Go set; one row
	// without the mat-vec kernels), GemmStd elsewhere; repacked weights take the repacked GEMM.
	{core.TypeQ4_0, layoutStd, "generic", "qgemm qgemm qgemm qgemm qgemm qgemm qgemm"},
	{core.TypeQ4_0, layoutStd, repackSet, "qgemm gemmstd gemmstd gemmstd gemmstd gemmstd gemmstd"},
	{core.TypeQ4_0, layoutStd, matVecSet, "gemmstd gemmstd gemmstd gemmstd gemmstd gemmstd gemmstd"},
	{core.TypeQ4_0, layoutRepack, allSets, "repacked repacked repacked repacked repacked repacked repacked"},
	{core.TypeQ8_0, layoutStd, "generic", "qgemm qgemm qgemm qgemm qgemm qgemm qgemm"},
	{core.TypeQ8_0, layoutStd, repackSet, "qgemm gemmstd gemmstd gemmstd gemmstd gemmstd gemmstd"},
	{core.TypeQ8_0, layoutStd, matVecSet, "gemmstd gemmstd gemmstd gemmstd gemmstd gemmstd gemmstd"},
	{core.TypeQ8_0, layoutRepack, allSets, "repacked repacked repacked repacked repacked repacked repacked"},

	// Q4_1 has no quantized GEMM: per-row dots where GemmStd is not fast.
	{core.TypeQ4_1, layoutStd, "generic", "dot dot dot dot dot dot dot"},
	{core.TypeQ4_1, layoutStd, repackSet, "dot gemmstd gemmstd gemmstd gemmstd gemmstd gemmstd"},
	{core.TypeQ4_1, layoutStd, matVecSet, "gemmstd gemmstd gemmstd gemmstd gemmstd gemmstd gemmstd"},
	{core.TypeQ4_1, layoutRepack, allSets, "repacked repacked repacked repacked repacked repacked repacked"},

	// Q5, the K-quants without SIMD kernels, MXFP4, NVFP4, Q1_0, TQ1_0, TQ2_0 and the IQ2/IQ1
	// types: per-row dots.
	{core.TypeQ5_0, layoutStd, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeQ5_0, layoutRepack, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeQ5_1, layoutStd, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeQ5_1, layoutRepack, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeQ2_K, layoutStd, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeQ2_K, layoutRepack, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeQ3_K, layoutStd, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeQ3_K, layoutRepack, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeMXFP4, layoutStd, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeMXFP4, layoutRepack, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeNVFP4, layoutStd, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeNVFP4, layoutRepack, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeQ1_0, layoutStd, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeQ1_0, layoutRepack, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeTQ1_0, layoutStd, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeTQ1_0, layoutRepack, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeTQ2_0, layoutStd, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeTQ2_0, layoutRepack, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeQ2_0, layoutStd, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeQ2_0, layoutRepack, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeIQ3_XXS, layoutStd, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeIQ3_XXS, layoutRepack, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeIQ3_S, layoutStd, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeIQ3_S, layoutRepack, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeIQ2_XXS, layoutStd, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeIQ2_XXS, layoutRepack, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeIQ2_XS, layoutStd, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeIQ2_XS, layoutRepack, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeIQ2_S, layoutStd, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeIQ2_S, layoutRepack, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeIQ1_S, layoutStd, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeIQ1_S, layoutRepack, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeIQ1_M, layoutStd, allSets, "dot dot dot dot dot dot dot"},
	{core.TypeIQ1_M, layoutRepack, allSets, "dot dot dot dot dot dot dot"},

	// K-quants and IQ4 with tiled dots.
	// Q4_K, Q6_K: weights repacked on the fly from kstdMinN rows where the set has their kernels
	// (every set with assembly: the AVX2 micro-kernels).
	{core.TypeQ4_K, layoutStd, "generic", "ktile ktile ktile ktile ktile ktile ktile"},
	{core.TypeQ4_K, layoutStd, repackSet + " avx512vnni+vbmi avx512bf16+vbmi", "ktile ktile ktile ktile ktile ktile kstd"},
	// Q4_K in a CPU_REPACK buffer is stored repacked (AcceptsWeight places it there on the sets
	// with assembly only; placed by hand on generic, the repacked products run their Go twins).
	{core.TypeQ4_K, layoutRepack, "generic avx2 avxvnni avx512 avx512vnni avx512vnni+vbmi avx512bf16 avx512bf16+vbmi", "repacked repacked repacked repacked repacked repacked repacked"},
	{core.TypeQ5_K, layoutStd, allSets, "ktile ktile ktile ktile ktile ktile ktile"},
	{core.TypeQ5_K, layoutRepack, allSets, "ktile ktile ktile ktile ktile ktile ktile"},
	{core.TypeQ6_K, layoutStd, "generic", "ktile ktile ktile ktile ktile ktile ktile"},
	{core.TypeQ6_K, layoutStd, repackSet + " avx512vnni+vbmi avx512bf16+vbmi", "ktile ktile ktile ktile ktile ktile kstd"},
	{core.TypeQ6_K, layoutRepack, "generic", "ktile ktile ktile ktile ktile ktile ktile"},
	{core.TypeQ6_K, layoutRepack, repackSet + " avx512vnni+vbmi avx512bf16+vbmi", "ktile ktile ktile ktile ktile ktile kstd"},
	{core.TypeIQ4_NL, layoutStd, allSets, "ktile ktile ktile ktile ktile ktile ktile"},
	{core.TypeIQ4_NL, layoutRepack, allSets, "ktile ktile ktile ktile ktile ktile ktile"},
	{core.TypeIQ4_XS, layoutStd, allSets, "ktile ktile ktile ktile ktile ktile ktile"},
	{core.TypeIQ4_XS, layoutRepack, allSets, "ktile ktile ktile ktile ktile ktile ktile"},
}

const (
	routeK = 256 // elements per weight row (a whole K-quant super-block)
	routeM = 32  // weight rows
)

// routeWeights places a [k, m, experts] weight tensor of typ in layout (random bytes are not
// needed: planning reads no values).
func routeWeights(t *testing.T, typ core.Type, layout mmLayout, experts int64) *core.Tensor {
	t.Helper()
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	w := ctx.NewTensor(typ, routeK, routeM, experts)
	bt := core.HostBufferType()
	if layout == layoutRepack {
		bt = RepackBufferType()
	}
	buf, err := bt.Alloc(bt.AllocSize(w))
	if err != nil {
		t.Fatal(err)
	}
	if err := core.TensorAlloc(buf, w, 0); err != nil {
		t.Fatal(err)
	}
	return w
}

// planOne plans the graph of out for threads workers on kernels ks and returns the routes
// planned for out.
func planOne(t *testing.T, out *core.Tensor, ref bool, ks mmKernels) []mmRoute {
	t.Helper()
	g := core.NewGraph(16)
	g.BuildForwardExpand(out)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	pl, err := makePlan(g, 2, ref, false, ks)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(g.Nodes(), out)
	if i < 0 || pl.routes == nil {
		t.Fatalf("%v: no routes planned", out)
	}
	return pl.routes[i]
}

// mulMatNode builds MUL_MAT(w, x) with x an f32 [routeK, n] matrix in host memory.
func mulMatNode(t *testing.T, w *core.Tensor, n int64) *core.Tensor {
	t.Helper()
	ctx := core.NewContext(core.ContextParams{MemSize: 4*routeK*n + 4*routeM*n + 1<<12})
	x := ctx.NewTensor2D(core.TypeF32, routeK, n)
	r := ctx.MulMat(w, x)
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	return r
}

// expectedRoutes returns the route table as a map from "type/layout/set" to the routes of routeNs,
// failing on a row that names an unknown set or route, repeats a case, or has the wrong length.
func expectedRoutes(t *testing.T) map[string][]mmRoute {
	t.Helper()
	byName := map[string]mmRoute{}
	for r := range mmRoute(len(routeNames)) {
		byName[r.String()] = r
	}
	want := map[string][]mmRoute{}
	for _, row := range mulMatRouteTable {
		var routes []mmRoute
		for _, name := range strings.Fields(row.routes) {
			r, ok := byName[name]
			if !ok {
				t.Fatalf("route table: %v %v: unknown route %q", row.typ, row.layout, name)
			}
			routes = append(routes, r)
		}
		if len(routes) != len(routeNs) {
			t.Fatalf("route table: %v %v: %d routes for %d row counts", row.typ, row.layout, len(routes), len(routeNs))
		}
		for _, set := range strings.Fields(row.sets) {
			if !slices.ContainsFunc(routeSets, func(s routeSet) bool { return s.name == set }) {
				t.Fatalf("route table: %v %v: unknown kernel set %q", row.typ, row.layout, set)
			}
			key := fmt.Sprintf("%v/%v/%s", row.typ, row.layout, set)
			if _, dup := want[key]; dup {
				t.Fatalf("route table: %s has two rows", key)
			}
			want[key] = routes
		}
	}
	return want
}

// mulMatTypes lists every weight type the CPU's MUL_MAT takes.
func mulMatTypes() []core.Type {
	var out []core.Type
	for t := core.Type(0); t < 64; t++ {
		if t.Valid() && refVecDot(t) != nil {
			out = append(out, t)
		}
	}
	return out
}

// TestMulMatRouteTable plans a MUL_MAT for every weight type, layout, kernel set and row count
// of the route table and checks the planned route against it; every case must have a row. With
// Options.Reference every case is routeRef.
func TestMulMatRouteTable(t *testing.T) {
	want := expectedRoutes(t)
	for _, typ := range mulMatTypes() {
		for _, layout := range []mmLayout{layoutStd, layoutRepack} {
			w := routeWeights(t, typ, layout, 1)
			nodes := make([]*core.Tensor, len(routeNs))
			for j, n := range routeNs {
				nodes[j] = mulMatNode(t, w, n)
				if got := planOne(t, nodes[j], true, mmKernels{repack: true, stdMatVec: true}); len(got) != 1 || got[0] != routeRef {
					t.Errorf("%v %v n=%d reference: routes %v, want [ref]", typ, layout, n, got)
				}
			}
			for _, s := range routeSets {
				key := fmt.Sprintf("%v/%v/%s", typ, layout, s.name)
				exp, ok := want[key]
				if !ok {
					t.Errorf("route table: no row for %s", key)
					continue
				}
				for j, n := range routeNs {
					got := planOne(t, nodes[j], false, s.ks)
					if len(got) != 1 || got[0] != exp[j] {
						t.Errorf("%s n=%d: routes %v, want [%v]", key, n, got, exp[j])
					}
				}
			}
		}
	}
}

// TestMulMatRouteSetsMatchKern checks routeSets against the kernels the active set really has,
// so the table's column for this CPU's set (and each set TANDEM_CPU_KERNELS caps it to) holds.
func TestMulMatRouteSetsMatchKern(t *testing.T) {
	active := kern.ActiveKernelSet()
	vbmi := active >= kern.SetAVX512VNNI && cpuid.CPU.Supports(cpuid.AVX512VBMI)
	for _, s := range routeSets {
		if s.set != active || s.vbmi != vbmi {
			continue
		}
		if got := activeMMKernels(); got != s.ks {
			t.Fatalf("kernel set %s: kern offers %+v, routeSets says %+v", s.name, got, s.ks)
		}
		return
	}
	t.Fatalf("kernel set %v (VBMI %v) has no entry in routeSets", active, vbmi)
}

// TestMulMatIDRoutesMatchMulMat plans MUL_MAT_ID nodes over expert weights of every type and
// layout, and checks that the route planned for an expert pass of n rows is the MUL_MAT route
// table's for n (the expert's MUL_MAT is a dense MUL_MAT of n rows), on every kernel set.
func TestMulMatIDRoutesMatchMulMat(t *testing.T) {
	want := expectedRoutes(t)
	const experts, used, tokens = 4, 2, 128 // 256 rows: one pass holds up to mulMatIDMaxRows
	for _, typ := range mulMatTypes() {
		for _, layout := range []mmLayout{layoutStd, layoutRepack} {
			as := routeWeights(t, typ, layout, experts)
			ctx := core.NewContext(core.ContextParams{MemSize: 4*routeK*used*tokens + 4*used*tokens + 4*routeM*used*tokens + 1<<12})
			b := ctx.NewTensor3D(core.TypeF32, routeK, used, tokens)
			ids := ctx.NewTensor2D(core.TypeI32, used, tokens)
			r := ctx.MulMatID(as, b, ids)
			if err := ctx.Err(); err != nil {
				t.Fatal(err)
			}
			if got := planOne(t, r, true, mmKernels{}); got != nil {
				t.Errorf("%v %v reference: routes %v, want none", typ, layout, got)
			}
			for _, s := range routeSets {
				key := fmt.Sprintf("%v/%v/%s", typ, layout, s.name)
				got := planOne(t, r, false, s.ks)
				if len(got) != mulMatIDMaxRows {
					t.Fatalf("%s: %d routes, want one per row count 1..%d", key, len(got), mulMatIDMaxRows)
				}
				for j, n := range routeNs {
					if n > mulMatIDMaxRows {
						continue
					}
					if got[n-1] != want[key][j] {
						t.Errorf("%s: expert pass of %d rows: route %v, want %v", key, n, got[n-1], want[key][j])
					}
				}
			}
		}
	}
}

// TestMulMatRoutedKernelMatchesPlan runs MUL_MAT and MUL_MAT_ID graphs and checks that the routes
// the kernels were handed are the plan's (the route decision runs nowhere else), and that a
// cached plan is planned again when a node's shape changes under it.
func TestMulMatRoutedKernelMatchesPlan(t *testing.T) {
	be, err := New(Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	w := routeWeights(t, core.TypeQ4_0, layoutStd, 1)
	r := mulMatNode(t, w, 4)
	x := r.Src[1]
	g := core.NewGraph(16)
	g.BuildForwardExpand(r)
	var seen []mmRoute
	withHook(t, func(p *params, n *core.Tensor) {
		if n == r && p.ith == 0 {
			seen = append(seen, p.routes...)
		}
	})
	ks := activeMMKernels()
	if err := be.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	if want := mulMatRouteOf(r, false, ks); !slices.Equal(seen, []mmRoute{want}) {
		t.Fatalf("kernel saw routes %v, want [%v]", seen, want)
	}
	// One activation row instead of four: the cached plan no longer fits the node.
	x.Ne[1], x.Nb[2], x.Nb[3] = 1, x.Nb[1], x.Nb[1]
	r.Ne[1], r.Nb[2], r.Nb[3] = 1, r.Nb[1], r.Nb[1]
	seen = nil
	if err := be.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	if want := mulMatRouteOf(r, false, ks); !slices.Equal(seen, []mmRoute{want}) {
		t.Fatalf("after the shape change the kernel saw routes %v, want [%v]", seen, want)
	}
	if ks.repack && !ks.stdMatVec && seen[0] != routeQgemm {
		t.Fatalf("one row of Q4_0 on %v: route %v, want qgemm", kern.ActiveKernelSet(), seen[0])
	}
}

// TestMulMatNoRouteFails checks that a MUL_MAT kernel handed no route fails with an error naming
// the node instead of picking a path of its own.
func TestMulMatNoRouteFails(t *testing.T) {
	be, err := New(Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	w := routeWeights(t, core.TypeF32, layoutStd, 1)
	r := mulMatNode(t, w, 2)
	g := core.NewGraph(16)
	g.BuildForwardExpand(r)
	withHook(t, func(p *params, n *core.Tensor) {
		if n == r {
			p.routes = nil
		}
	})
	err = be.GraphCompute(g)
	if err == nil || !strings.Contains(err.Error(), "no planned route") {
		t.Fatalf("err = %v, want a missing-route error", err)
	}
}

// TestMMRouteString pins the route names the table uses.
func TestMMRouteString(t *testing.T) {
	var got []string
	for r := range mmRoute(len(routeNames) + 1) {
		got = append(got, r.String())
	}
	want := "none ref dot ktile gemm qgemm gemmstd repacked kstd mmRoute(9)"
	if s := strings.Join(got, " "); s != want {
		t.Fatalf("routes %q, want %q", s, want)
	}
}
