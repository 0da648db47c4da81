package llm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/backends/vulkan"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/llm/testmodel"
)

// TestWeightProductPrecision: the graph's products with the weights ask for bf16 (PrecBF16) where
// the layer's weights are on the CPU, unless Options.F32Products, and keep PrecDefault on other
// devices; the MoE router and the soft_max path's KQ are PrecF32 everywhere, its KQV PrecDefault.
func TestWeightProductPrecision(t *testing.T) {
	spec := testmodel.Tiny("llama-moe")
	spec.WeightType = core.TypeF16
	path := filepath.Join(t.TempDir(), "moe-f16.gguf")
	if err := testmodel.Write(path, spec); err != nil {
		t.Fatal(err)
	}
	check := func(name string, o Options, wantCPU, wantOther core.Prec) {
		t.Helper()
		m, err := Open(path, o)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		s, err := m.NewSession(SessionOptions{ContextSize: 256, FlashAttn: FlashAttnOff})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ub := s.buildGraph(70, 256, 1)
		var weights, router, kq, kqv int
		for _, nd := range ub.g.Nodes() {
			if nd.Op != core.OpMulMat {
				continue
			}
			got := core.Prec(nd.Params[0])
			w := nd.Src[0].Name
			switch {
			case strings.HasSuffix(w, "ffn_gate_inp.weight"):
				router++
				if got != core.PrecF32 {
					t.Errorf("%s: router %s at precision %d, want PrecF32", name, w, got)
				}
			case strings.HasSuffix(w, ".weight"):
				weights++
				want := wantOther
				if onCPU(m, w) {
					want = wantCPU
				}
				if got != want {
					t.Errorf("%s: product with %s (on %s) at precision %d, want %d", name, w, layerOf(m, w), got, want)
				}
			case nd.Src[1].Op == core.OpSoftMax:
				kqv++
				if got != core.PrecDefault {
					t.Errorf("%s: KQV at precision %d, want PrecDefault", name, got)
				}
			default:
				kq++
				if got != core.PrecF32 {
					t.Errorf("%s: KQ (%s) at precision %d, want PrecF32", name, w, got)
				}
			}
		}
		// per layer: q, k, v, o and the router; one head
		if nl := spec.NLayer; weights != 4*nl+1 || router != nl || kq != nl || kqv != nl {
			t.Errorf("%s: %d weight products, %d routers, %d KQ, %d KQV; want %d, %d, %d, %d", name, weights, router, kq, kqv, 4*nl+1, nl, nl, nl)
		}
	}
	check("CPU", Options{}, core.PrecBF16, core.PrecBF16)
	check("CPU, F32Products", Options{F32Products: true}, core.PrecDefault, core.PrecDefault)
	if ok, why := vulkan.Available(); !ok {
		if os.Getenv("TANDEM_REQUIRE_VULKAN") == "1" {
			t.Fatalf("TANDEM_REQUIRE_VULKAN=1 but Vulkan is unavailable: %s", why)
		}
		t.Skip(why)
	}
	check("half on Vulkan", Options{GPULayers: 2}, core.PrecBF16, core.PrecDefault)
}

// onCPU reports whether the weight named w sits on the CPU backend.
func onCPU(m *Model, w string) bool { return strings.HasPrefix(layerOf(m, w), "CPU") }

// layerOf is the backend of the layer holding the weight named w ("blk.N." or the output layer).
func layerOf(m *Model, w string) string {
	il := m.HParams.NLayer
	if strings.HasPrefix(w, "blk.") {
		il = 0
		for _, c := range w[len("blk."):] {
			if c < '0' || c > '9' {
				break
			}
			il = il*10 + int(c-'0')
		}
	}
	return m.LayerBackend(il)
}
