package llm_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/backends/rpc"
	"github.com/tandem-ml/tandem/backends/vulkan"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/llm"
)

func needVulkan(t *testing.T) {
	t.Helper()
	if ok, why := vulkan.Available(); !ok {
		if os.Getenv("TANDEM_REQUIRE_VULKAN") == "1" {
			t.Fatalf("TANDEM_REQUIRE_VULKAN=1 but Vulkan is unavailable: %s", why)
		}
		t.Skip(why)
	}
}

// deviceCases are the models the device tests run: a dense model and an MoE one.
var deviceCases = []string{"llama-f32", "qwen3moe-f32"}

// TestSplitAcrossVulkan runs the same prompt on the CPU alone, with every layer on Vulkan and with
// half of them there: the logits agree (NMSE ≤ 1e-6), and the layers sit where -ngl says.
func TestSplitAcrossVulkan(t *testing.T) {
	needVulkan(t)
	for _, name := range deviceCases {
		t.Run(name, func(t *testing.T) {
			c := caseByName(t, name)
			so := llm.SessionOptions{KVType: llm.KVF32, ContextSize: 256}
			ref := evalAll(t, openCase(t, name, llm.Options{}), so, c.IDs)
			n := c.Spec.NLayer
			for _, ngl := range []int{-1, n/2 + 1, 1} { // all, half, the output layer only
				m := openCase(t, name, llm.Options{GPULayers: ngl})
				var onGPU int
				for il := 0; il <= n; il++ {
					if strings.HasPrefix(m.LayerBackend(il), "Vulkan") {
						onGPU++
					}
				}
				want := ngl
				if ngl < 0 {
					want = n + 1
				}
				if onGPU != want {
					t.Errorf("ngl %d: %d layers on Vulkan, want %d", ngl, onGPU, want)
				}
				if got := m.LayerBackend(n); ngl != 0 && !strings.HasPrefix(got, "Vulkan") {
					t.Errorf("ngl %d: output layer on %s, want Vulkan", ngl, got)
				}
				// the work really crosses devices: the embeddings' split on the CPU, then Vulkan
				sess, err := m.NewSession(so)
				if err != nil {
					t.Fatal(err)
				}
				if !sess.FlashAttn() {
					t.Errorf("ngl %d: FlashAttnAuto chose the soft_max path though Vulkan runs FLASH_ATTN_EXT", ngl)
				}
				if _, err := sess.Eval(context.Background(), c.IDs, llm.LastLogits); err != nil {
					t.Fatal(err)
				}
				if st := sess.Stats(); st.Splits < 2 || st.Copies < 1 {
					t.Errorf("ngl %d: %d splits and %d copies: the graph did not cross to Vulkan", ngl, st.Splits, st.Copies)
				}
				sess.Close()
				for _, fa := range []llm.FlashAttn{llm.FlashAttnOff, llm.FlashAttnAuto} {
					so := so
					so.FlashAttn = fa
					sameLogits(t, "ngl "+strconv.Itoa(ngl)+" fa "+strconv.Itoa(int(fa)), evalAll(t, m, so, c.IDs, 5, 1, 3), ref, 1e-6)
				}
			}
		})
	}
}

// TestLayerOnRPC puts the last layer and the output on a loopback RPC server (tandem's own, over
// a CPU backend) and gets the CPU's logits.
func TestLayerOnRPC(t *testing.T) {
	c := caseByName(t, "llama-f32")
	so := llm.SessionOptions{KVType: llm.KVF32, ContextSize: 256}
	ref := evalAll(t, openCase(t, c.Name, llm.Options{}), so, c.IDs)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	remote, err := cpu.New(cpu.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rpc.Serve(ctx, l, remote) }()
	defer func() {
		cancel()
		l.Close()
		<-done
	}()

	// the RPC device comes first among the offload devices; give it every offloaded layer
	split := []float64{1}
	for _, d := range core.Devices() {
		if d.Type() != core.DeviceCPU {
			split = append(split, 0)
		}
	}
	m := openCase(t, c.Name, llm.Options{GPULayers: 2, RPC: []string{l.Addr().String()}, TensorSplit: split})
	n := c.Spec.NLayer
	for il, want := range map[int]bool{0: false, n - 1: true, n: true} {
		if got := m.LayerBackend(il); strings.HasPrefix(got, "CPU") == want {
			t.Errorf("layer %d runs on %s", il, got)
		}
	}
	sameLogits(t, "last layer over RPC", evalAll(t, m, so, c.IDs, 7, 5), ref, 1e-6)
	var devs []string
	for _, be := range m.Backends() {
		devs = append(devs, be.Name()+"/"+be.Device().Type().String())
	}
	t.Logf("backends: %v", devs)
}

// TestCPUOnlyOpensNoOtherDevice: with GPULayers 0 and Backends nil, Open asks the CPU's
// registration alone for devices (another backend's enumeration loads its drivers for good);
// with layers to offload it asks every registration.
func TestCPUOnlyOpensNoOtherDevice(t *testing.T) {
	asked := 0
	core.Register(core.Registration{Name: "llm-test-probe", Devices: func() []core.Device {
		asked++
		return nil // no devices: the other tests in the package see nothing new
	}})
	openCase(t, "llama-f32", llm.Options{GPULayers: 0})
	if asked != 0 {
		t.Fatalf("GPULayers 0: another registration was asked for its devices %d times", asked)
	}
	openCase(t, "llama-f32", llm.Options{GPULayers: -1})
	if asked == 0 {
		t.Fatal("GPULayers -1: the other registrations were never asked for their devices")
	}
}

// TestGenerationReplaysOnVulkan: with every layer on Vulkan, tokens evaluated one at a time run
// one graph again and again, which the Vulkan backend replays from its recording instead of
// recording it anew; the logits are the CPU's (NMSE ≤ 1e-6) token by token.
func TestGenerationReplaysOnVulkan(t *testing.T) {
	needVulkan(t)
	c := caseByName(t, "llama-f32")
	so := llm.SessionOptions{KVType: llm.KVF32, ContextSize: 256}
	ones := make([]int, len(c.IDs))
	for i := range ones {
		ones[i] = 1
	}
	ref := evalAll(t, openCase(t, "llama-f32", llm.Options{}), so, c.IDs, ones...)
	m := openCase(t, "llama-f32", llm.Options{GPULayers: -1})
	vk := vulkanOf(t, m)
	r0 := vk.Replays()
	got := evalAll(t, m, so, c.IDs, ones...)
	sameLogits(t, "token by token on Vulkan", got, ref, 1e-6)
	if n := vk.Replays() - r0; n < len(c.IDs)-2 {
		t.Errorf("%d tokens one at a time: %d graphs replayed, want at least %d", len(c.IDs), n, len(c.IDs)-2)
	}
}

// TestVulkanFusionKeepsLogits: the Vulkan backend's node fusions (the weighted norms, the residual
// sum before them, each layer's rotated keys stored in the KV cache) change no logit: a model on
// Vulkan gives the same logits bit for bit with fusion off and on, prompt and generation, over
// f16 and f32 caches. A generated token saves what the prompt's graph saves (the norms) and one
// dispatch more per layer (ROPE with SET_ROWS, which the prompt's tokens do not fuse).
func TestVulkanFusionKeepsLogits(t *testing.T) {
	needVulkan(t)
	c := caseByName(t, "llama-f32")
	prompt := len(c.IDs) - 3
	for _, kv := range []llm.KVType{llm.KVF16, llm.KVF32} {
		so := llm.SessionOptions{KVType: kv, ContextSize: 256}
		var want [][]float32
		var dPrompt, dAll [2]int // dispatches of the prompt alone, of the prompt and 3 tokens
		for run, fuse := range []bool{false, true} {
			m := openCase(t, "llama-f32", llm.Options{GPULayers: -1})
			vk := vulkanOf(t, m)
			vk.SetFusion(fuse)
			d0 := vk.Dispatches()
			evalAll(t, m, so, c.IDs[:prompt])
			d1 := vk.Dispatches()
			got := evalAll(t, m, so, c.IDs, prompt, 1, 1, 1)
			dPrompt[run], dAll[run] = d1-d0, vk.Dispatches()-d1
			m.Close()
			if want == nil {
				want = got
				continue
			}
			identicalLogits(t, fmt.Sprintf("KV %v: fused against unfused", kv), got, want)
		}
		sp, sa := dPrompt[0]-dPrompt[1], dAll[0]-dAll[1]
		if sp <= 0 || (sa-sp)%3 != 0 || (sa-sp)/3-sp != c.Spec.NLayer {
			t.Errorf("KV %v: fusion saved %d dispatches of the prompt and %d of the prompt and 3 tokens: want %d per token more than the prompt's (one per layer)",
				kv, sp, sa, c.Spec.NLayer)
		}
	}
}

// vulkanOf returns m's Vulkan backend.
func vulkanOf(t *testing.T, m *llm.Model) *vulkan.Backend {
	t.Helper()
	for _, be := range m.Backends() {
		if v, ok := be.(*vulkan.Backend); ok {
			return v
		}
	}
	t.Fatal("no Vulkan backend among the model's")
	return nil
}
