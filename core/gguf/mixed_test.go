package gguf_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/backends/vulkan"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/gguf"
	"github.com/tandem-ml/tandem/scheduler"
)

// TestMain fails the run when the Vulkan validation layer (TANDEM_VK_VALIDATE=1) said anything.
func TestMain(m *testing.M) {
	code := m.Run()
	if !vulkan.ShutdownAndReport(os.Stderr) {
		code = 1
	}
	os.Exit(code)
}

// canMap: the platform maps files (Load falls back to copying elsewhere).
var canMap = runtime.GOOS != "windows" && runtime.GOOS != "plan9" && runtime.GOOS != "js" && runtime.GOOS != "wasip1"

const (
	mixDim    = 64
	mixBlocks = 4
	mixTokens = 3
)

// writeMixedModel writes a 4-block model: each block has a q8_0 projection and an f32 norm.
func writeMixedModel(t *testing.T) string { return writeMixedModelOf(t, core.TypeQ8_0) }

// writeMixedModelOf writes the 4-block model with projections of type typ.
func writeMixedModelOf(t *testing.T, typ core.Type) string {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 7))
	ctx := core.NewContext(core.ContextParams{MemSize: 4 << 20})
	var ts []*core.Tensor
	for b := range mixBlocks {
		w := ctx.NewTensor2D(typ, mixDim, mixDim).SetName(fmt.Sprintf("blk.%d.attn_q.weight", b))
		vals := make([]float32, mixDim*mixDim)
		for i := range vals {
			vals[i] = float32(r.NormFloat64()) / mixDim
		}
		if err := typ.FromFloat(vals, w.Data()); err != nil {
			t.Fatal(err)
		}
		n := ctx.NewTensor1D(core.TypeF32, mixDim).SetName(fmt.Sprintf("blk.%d.attn_norm.weight", b))
		for i := range n.Float32s() {
			n.Float32s()[i] = 1 + float32(r.NormFloat64())*0.1
		}
		ts = append(ts, w, n)
	}
	var md gguf.Metadata
	_ = md.Set("general.architecture", "mix")
	_ = md.Set("mix.block_count", uint32(mixBlocks))
	path := filepath.Join(t.TempDir(), "mix.gguf")
	if err := gguf.WriteFile(path, &md, ts); err != nil {
		t.Fatal(err)
	}
	return path
}

type mixGraph struct {
	g     *core.Graph
	in    *core.Tensor
	out   *core.Tensor
	projs []*core.Tensor
}

// buildMixed: h = x; per block h = h + silu(W · (rms_norm(h) * norm)).
func buildMixed(t *testing.T, m *gguf.Model) mixGraph {
	t.Helper()
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x := ctx.NewTensor2D(core.TypeF32, mixDim, mixTokens).SetName("x").SetInput()
	h := x
	var projs []*core.Tensor
	for b := range mixBlocks {
		w := m.Tensor(fmt.Sprintf("blk.%d.attn_q.weight", b))
		n := m.Tensor(fmt.Sprintf("blk.%d.attn_norm.weight", b))
		p := ctx.MulMat(w, ctx.Mul(ctx.RMSNorm(h, 1e-5), n))
		projs = append(projs, p)
		h = ctx.Add(h, ctx.Silu(p))
	}
	h.SetName("out").SetOutput()
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(h)
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	return mixGraph{g: g, in: x, out: h, projs: projs}
}

func runMixed(t *testing.T, path string, backends []core.Backend, place gguf.Placement) (*scheduler.Scheduler, mixGraph, []float32) {
	t.Helper()
	return runMixedOpts(t, path, backends, &gguf.LoadOptions{Placement: place})
}

// runMixedOpts is runMixed with load options.
func runMixedOpts(t *testing.T, path string, backends []core.Backend, opts *gguf.LoadOptions) (*scheduler.Scheduler, mixGraph, []float32) {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := f.Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	mg := buildMixed(t, m)
	s, err := scheduler.New(backends, scheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.AllocGraph(mg.g); err != nil {
		t.Fatal(err)
	}
	x := make([]float32, mixDim*mixTokens)
	for i := range x {
		x[i] = float32(math.Sin(float64(i) * 0.37))
	}
	if err := core.SetFloat32s(mg.in, x); err != nil {
		t.Fatal(err)
	}
	if err := s.GraphCompute(mg.g); err != nil {
		t.Fatal(err)
	}
	out, err := core.GetFloat32s(mg.out)
	if err != nil {
		t.Fatal(err)
	}
	return s, mg, out
}

// A model file whose first two blocks are placed on Vulkan and the rest on the CPU (mapped from the
// file) computes through the scheduler what the CPU-only run computes, within ggml's matmul NMSE.
func TestMixedPlacementVulkanCPU(t *testing.T) {
	if ok, why := vulkan.Available(); !ok {
		if os.Getenv("TANDEM_REQUIRE_VULKAN") == "1" {
			t.Fatalf("TANDEM_REQUIRE_VULKAN=1 but Vulkan is unavailable: %s", why)
		}
		t.Skipf("Vulkan unavailable: %s", why)
	}
	vk, err := vulkan.New(0)
	if err != nil {
		t.Fatal(err)
	}
	defer vk.Close()
	cb, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	path := writeMixedModel(t)

	_, _, want := runMixed(t, path, []core.Backend{cb}, nil)
	s, mg, got := runMixed(t, path, []core.Backend{vk, cb}, gguf.ByBlock(2, vk.DefaultBufferType(), core.HostBufferType()))
	for b, p := range mg.projs {
		wantBE := core.Backend(cb)
		if b < 2 {
			wantBE = vk
		}
		if be := s.TensorBackend(p); be != wantBE {
			t.Errorf("block %d projection ran on %v, want %v", b, be.Name(), wantBE.Name())
		}
		wantBT := vk.DefaultBufferType()
		if b >= 2 {
			wantBT = cpu.RepackBufferType() // q8_0 weights on the CPU are repacked by default
		}
		if wb := p.Src[0].Buffer.Type(); wb != wantBT {
			t.Errorf("block %d weights in %s", b, wb.Name())
		}
	}
	if s.NSplits() < 2 {
		t.Errorf("%d splits, want Vulkan and CPU parts", s.NSplits())
	}
	var num, den float64
	for i := range want {
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	if den == 0 || num/den > 5e-4 {
		t.Fatalf("Vulkan+CPU vs CPU-only: NMSE %g (sum of squares %g)", num/den, den)
	}
	t.Logf("%d splits, NMSE %.3g vs the CPU-only run", s.NSplits(), num/den)
}

// Loading places Q4_0 and Q8_0 projections on the CPU in CPU_REPACK by default (the f32 norms stay
// mapped), in the mapping with NoExtraBufferTypes, and the model computes the same either way.
func TestLoadRepacksCPUWeights(t *testing.T) {
	cb, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	for _, typ := range []core.Type{core.TypeQ4_0, core.TypeQ8_0} {
		path := writeMixedModelOf(t, typ)
		_, plain, want := runMixedOpts(t, path, []core.Backend{cb}, &gguf.LoadOptions{NoExtraBufferTypes: true})
		_, rp, got := runMixedOpts(t, path, []core.Backend{cb}, nil)
		for b := range mixBlocks {
			w, pw := rp.projs[b].Src[0], plain.projs[b].Src[0]
			if w.Buffer.Type() != cpu.RepackBufferType() {
				t.Errorf("%v: block %d weight in %s, want CPU_REPACK", typ, b, w.Buffer.Type().Name())
			}
			if pbt := pw.Buffer.Type(); canMap && pbt != gguf.MappedBufferType() {
				t.Errorf("%v: NoExtraBufferTypes: block %d weight in %s, want the mapping", typ, b, pbt.Name())
			}
			if n := rp.projs[b].Src[1].Src[1]; canMap && n.Buffer.Type() != gguf.MappedBufferType() {
				t.Errorf("%v: block %d norm in %s, want the mapping", typ, b, n.Buffer.Type().Name())
			}
			wb, pb := make([]byte, w.NBytes()), make([]byte, w.NBytes())
			if err := core.TensorGet(w, wb, 0); err != nil {
				t.Fatal(err)
			}
			if err := core.TensorGet(pw, pb, 0); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(wb, pb) {
				t.Errorf("%v: block %d: the repacked weight reads back other bytes than the file's", typ, b)
			}
		}
		var num, den float64
		for i := range want {
			d := float64(got[i]) - float64(want[i])
			num += d * d
			den += float64(want[i]) * float64(want[i])
		}
		if den == 0 || num/den > 5e-4 {
			t.Fatalf("%v: repacked vs mapped weights: NMSE %g", typ, num/den)
		}
	}
}

// BenchmarkLoadVulkan streams a 32 MiB file (8 q8_0 tensors) into Vulkan buffers in 4 MiB chunks,
// reporting MB/s. go test -run '^$' -bench LoadVulkan -benchtime 5x ./core/gguf
func BenchmarkLoadVulkan(b *testing.B) {
	if ok, why := vulkan.Available(); !ok {
		b.Skipf("Vulkan unavailable: %s", why)
	}
	vk, err := vulkan.New(0)
	if err != nil {
		b.Fatal(err)
	}
	defer vk.Close()
	ctx := core.NewContext(core.ContextParams{MemSize: 40 << 20})
	var ts []*core.Tensor
	for i := range 8 {
		x := ctx.NewTensor2D(core.TypeQ8_0, 4096, 1024).SetName(fmt.Sprintf("blk.%d.w", i))
		d := x.Data()
		for j := range d {
			d[j] = byte(j*7 + i)
		}
		ts = append(ts, x)
	}
	path := filepath.Join(b.TempDir(), "vk.gguf")
	if err := gguf.WriteFile(path, nil, ts); err != nil {
		b.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var size int64
	for _, ti := range f.Tensors {
		size += ti.Size
	}
	b.SetBytes(size)
	place := func(string, gguf.TensorInfo) core.BufferType { return vk.DefaultBufferType() }
	for b.Loop() {
		m, err := f.Load(&gguf.LoadOptions{Placement: place})
		if err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
}
