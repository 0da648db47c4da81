package llm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/rpc"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/gguf"
	"github.com/tandem-ml/tandem/llm/tokenizer"
)

// Options configure Open.
type Options struct {
	// GPULayers is llama.cpp's -ngl: how many layers, counted from the last and with the output
	// layer counting as one, run on the offload devices (GPUs, accelerators and RPC devices); the
	// rest, and the token embeddings, stay on the CPU. 0 runs everything on the CPU; a negative
	// value or one above the layer count offloads every layer.
	GPULayers int
	// Backends are the backends to run on, in priority order with the CPU last. nil creates one on
	// every registered device (core.Devices) plus the RPC devices; the model then owns and closes
	// them. Other devices than the CPU are only enumerated (which loads their drivers) and opened
	// when GPULayers is not 0.
	Backends []core.Backend
	// RPC lists servers (host:port) speaking ggml's RPC protocol whose devices take offloaded
	// layers, before the local ones (as llama.cpp's --rpc).
	RPC []string
	// TensorSplit gives the share of the offloaded layers per offload device, in order (llama.cpp's
	// --tensor-split); nil splits by each device's free memory.
	TensorSplit []float64
	// Threads sets the CPU backend's worker count (0: its default).
	Threads int
	// NoMmap copies host weights into memory instead of mapping the file.
	NoMmap bool
	// F32Products keeps every product with the weights at the backends' default precision:
	// without it, the products with the weights of the layers on the CPU allow bf16
	// (core.PrecBF16), which a prompt's products with F16 weights take on a CPU with AVX-512
	// BF16 (about 1.6 times faster). The attention's KQ and the MoE router always ask for f32.
	F32Products bool
}

// Model is a loaded language model: hyper-parameters, vocabulary and weights placed on devices. It
// is safe for concurrent use; its sessions share the weights.
type Model struct {
	HParams HParams

	vocab    *tokenizer.Vocab
	weights  *gguf.Model
	extra    []core.Buffer // buffers of tensors made here (a duplicated tied output)
	backends []core.Backend
	owned    bool
	clients  []*rpc.Client

	tokEmbd, outNorm, output, outputB, ropeFreqs *core.Tensor
	layers                                       []layer
	outputDev                                    int

	computeMu sync.Mutex // one graph at a time on the shared backends
	sessMu    sync.Mutex
	sessions  map[*Session]struct{} // open sessions, closed by Close
	closed    bool
	info      ModelInfo
	loadTime  time.Duration
	f32Prod   bool // Options.F32Products
	fileSize  int64
	closeOnce sync.Once
}

// Vocab is a model's tokenizer (see package llm/tokenizer).
type Vocab = tokenizer.Vocab

// OpenVocab reads the tokenizer of a GGUF file alone (a vocab-only file works).
func OpenVocab(path string) (*Vocab, error) { return tokenizer.Open(path) }

// Open loads the model in the GGUF file at path: checks its architecture and every tensor's shape,
// places each layer's weights on its device (mapping host weights from the file) and reads the
// vocabulary. Nothing stays open on error.
func Open(path string, opts Options) (*Model, error) {
	start := time.Now()
	f, err := gguf.Open(path)
	if err != nil {
		return nil, core.Errorf("tandem: llm: %w", err)
	}
	defer f.Close()
	m, err := load(f, opts)
	if err != nil {
		return nil, err
	}
	m.loadTime = time.Since(start)
	if st, err := os.Stat(path); err == nil {
		m.fileSize = st.Size()
	}
	return m, nil
}

func load(f *gguf.File, opts Options) (m *Model, err error) {
	h, err := readHParams(&f.Metadata)
	if err != nil {
		return nil, err
	}
	if err := checkTensors(f, h); err != nil {
		return nil, err
	}
	vocab, err := tokenizer.FromGGUF(&f.Metadata)
	if err != nil {
		return nil, core.Errorf("tandem: llm: vocabulary: %w", err)
	}
	if vocab.Len() > h.NVocab {
		return nil, fmt.Errorf("tandem: llm: the vocabulary has %d tokens but token_embd.weight only %d rows", vocab.Len(), h.NVocab)
	}
	m = &Model{HParams: *h, vocab: vocab, info: fileInfo(f, h), f32Prod: opts.F32Products}
	defer func() {
		if err != nil {
			m.Close()
			m = nil
		}
	}()
	if err := m.openBackends(opts); err != nil {
		return nil, err
	}
	if err := m.placeLayers(opts); err != nil {
		return nil, err
	}
	bufts := make([]core.BufferType, len(m.backends))
	for i, be := range m.backends {
		bufts[i] = be.DefaultBufferType()
	}
	cpu := len(m.backends) - 1
	placement := func(name string, _ gguf.TensorInfo) core.BufferType {
		if il, ok := gguf.BlockIndex(name); ok && il < len(m.layers) {
			return bufts[m.layers[il].dev]
		}
		switch name {
		case "output.weight", "output.bias", "output_norm.weight":
			return bufts[m.outputDev]
		case "rope_freqs.weight":
			return bufts[cpu] // read by every layer's ROPE: copied where needed
		}
		return bufts[cpu] // token embeddings stay on the CPU, as in llama.cpp
	}
	m.weights, err = f.Load(&gguf.LoadOptions{Placement: placement, NoMmap: opts.NoMmap})
	if err != nil {
		return nil, core.Errorf("tandem: llm: loading weights: %w", err)
	}
	m.bind()
	if m.output == nil { // tied embeddings
		m.output = m.tokEmbd
		if m.outputDev != cpu {
			if m.output, err = m.duplicate(f, "token_embd.weight", m.backends[m.outputDev]); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

// duplicate loads the file's tensor name a second time into be's memory (a tied output matrix
// on an offload device, as llama.cpp's TENSOR_DUPLICATED).
func (m *Model) duplicate(f *gguf.File, name string, be core.Backend) (*core.Tensor, error) {
	info, _ := f.Tensor(name)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	t := ctx.NewTensor(info.Type, info.Ne[:]...)
	t.SetName("output.weight")
	buf, err := alloc.AllocCtxTensorsWithOptions(ctx, be.DefaultBufferType(), alloc.CtxAllocOptions{NoExtraBufferTypes: true})
	if err != nil {
		return nil, core.Errorf("tandem: llm: duplicating %s for the output layer: %w", name, err)
	}
	m.extra = append(m.extra, buf)
	buf.SetUsage(core.BufferUsageWeights)
	r, err := f.TensorReader(name)
	if err != nil {
		return nil, err
	}
	chunk := make([]byte, min(info.Size, 4<<20))
	for off := int64(0); off < info.Size; {
		n := min(int64(len(chunk)), info.Size-off)
		if _, err := r.ReadAt(chunk[:n], off); err != nil {
			return nil, core.Errorf("tandem: llm: reading %s: %w", name, err)
		}
		if err := core.TensorSet(t, chunk[:n], off); err != nil {
			return nil, err
		}
		off += n
	}
	return t, nil
}

// bind looks the loaded tensors up by name (checkTensors vouched for their shapes).
func (m *Model) bind() {
	w := m.weights
	m.tokEmbd = w.Tensor("token_embd.weight")
	m.outNorm = w.Tensor("output_norm.weight")
	m.output = w.Tensor("output.weight")
	m.outputB = w.Tensor("output.bias")
	m.ropeFreqs = w.Tensor("rope_freqs.weight")
	for il := range m.layers {
		n := func(s string) *core.Tensor { return w.Tensor(fmt.Sprintf("blk.%d.%s", il, s)) }
		l := &m.layers[il]
		l.attnNorm = n("attn_norm.weight")
		l.wq, l.wk, l.wv, l.wo = n("attn_q.weight"), n("attn_k.weight"), n("attn_v.weight"), n("attn_output.weight")
		l.bq, l.bk, l.bv, l.bo = n("attn_q.bias"), n("attn_k.bias"), n("attn_v.bias"), n("attn_output.bias")
		l.qNorm, l.kNorm = n("attn_q_norm.weight"), n("attn_k_norm.weight")
		l.ffnNorm = n("ffn_norm.weight")
		l.ffnGate, l.ffnUp, l.ffnDown = n("ffn_gate.weight"), n("ffn_up.weight"), n("ffn_down.weight")
		l.gateB, l.upB, l.downB = n("ffn_gate.bias"), n("ffn_up.bias"), n("ffn_down.bias")
		l.gateInp = n("ffn_gate_inp.weight")
		l.gateExps, l.upExps, l.downExps = n("ffn_gate_exps.weight"), n("ffn_up_exps.weight"), n("ffn_down_exps.weight")
		l.ropeFreqs = n("rope_freqs.weight")
		if l.ropeFreqs == nil {
			l.ropeFreqs = m.ropeFreqs
		}
	}
}

// openBackends sets m.backends: the caller's, or one per registered device (offload devices only
// when layers are to be offloaded) plus the RPC servers' devices first.
func (m *Model) openBackends(opts Options) error {
	if opts.Backends != nil {
		if len(opts.Backends) == 0 {
			return errors.New("tandem: llm: Options.Backends is empty (nil means every registered device)")
		}
		for i, be := range opts.Backends {
			if be == nil || be.Device() == nil {
				return fmt.Errorf("tandem: llm: Options.Backends[%d] is nil or has no device", i)
			}
		}
		last := opts.Backends[len(opts.Backends)-1]
		if last.Device().Type() != core.DeviceCPU {
			return fmt.Errorf("tandem: llm: the last of Options.Backends must be the CPU (got %s)", last.Name())
		}
		if len(opts.RPC) > 0 {
			return errors.New("tandem: llm: Options.RPC needs Options.Backends nil (put RPC backends in Backends yourself)")
		}
		m.backends = append([]core.Backend(nil), opts.Backends...)
		return m.setThreads(opts.Threads)
	}
	m.owned = true
	var cpuDev core.Device
	var offload []core.Device
	devs := core.RegisteredDevices("CPU")
	if opts.GPULayers != 0 || !hasCPU(devs) {
		// Only an offload needs the other devices: enumerating them opens their drivers (on a
		// machine with Mesa's software Vulkan, ~50 MiB of libLLVM stay mapped for good).
		devs = core.Devices()
	}
	for _, d := range devs {
		if d.Type() == core.DeviceCPU {
			if cpuDev == nil {
				cpuDev = d
			}
			continue
		}
		offload = append(offload, d)
	}
	if cpuDev == nil {
		return errors.New("tandem: llm: no CPU device registered: import _ \"github.com/tandem-ml/tandem/backends/cpu\"")
	}
	if opts.GPULayers != 0 {
		for _, addr := range opts.RPC {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			c, err := rpc.Dial(ctx, addr)
			cancel()
			if err != nil {
				return core.Errorf("tandem: llm: RPC server %s: %w", addr, err)
			}
			m.clients = append(m.clients, c)
			for _, d := range c.Devices() {
				be, err := d.NewBackend()
				if err != nil {
					return core.Errorf("tandem: llm: RPC device %s at %s: %w", d.Name(), addr, err)
				}
				m.backends = append(m.backends, be)
			}
		}
		for _, d := range offload {
			be, err := d.NewBackend()
			if err != nil {
				return core.Errorf("tandem: llm: creating a backend on %s: %w", d.Name(), err)
			}
			m.backends = append(m.backends, be)
		}
	} else if len(opts.RPC) > 0 {
		return errors.New("tandem: llm: Options.RPC given with GPULayers 0: no layer would run remotely")
	}
	be, err := cpuDev.NewBackend()
	if err != nil {
		return core.Errorf("tandem: llm: creating the CPU backend: %w", err)
	}
	m.backends = append(m.backends, be)
	return m.setThreads(opts.Threads)
}

// hasCPU reports whether devs holds a CPU device.
func hasCPU(devs []core.Device) bool {
	for _, d := range devs {
		if d.Type() == core.DeviceCPU {
			return true
		}
	}
	return false
}

func (m *Model) setThreads(n int) error {
	if n == 0 {
		return nil
	}
	if n < 0 {
		return fmt.Errorf("tandem: llm: Threads %d is negative", n)
	}
	type threaded interface{ SetThreads(int) error }
	if t, ok := m.backends[len(m.backends)-1].(threaded); ok {
		return t.SetThreads(n)
	}
	return nil
}

// placeLayers decides each layer's device: the last GPULayers (output included) go to the offload
// devices in contiguous runs proportional to TensorSplit or free memory, the rest to the CPU.
func (m *Model) placeLayers(opts Options) error {
	n := m.HParams.NLayer
	cpu := len(m.backends) - 1
	m.layers = make([]layer, n)
	for i := range m.layers {
		m.layers[i].dev = cpu
	}
	m.outputDev = cpu
	ngl := opts.GPULayers
	if ngl < 0 || ngl > n+1 {
		ngl = n + 1
	}
	if ngl == 0 || cpu == 0 {
		return nil
	}
	split := opts.TensorSplit
	if split == nil {
		split = make([]float64, cpu)
		for i := range split {
			free, total := m.backends[i].Device().Memory()
			if free <= 0 {
				free = total
			}
			split[i] = float64(max(free, 1))
		}
	}
	if len(split) != cpu {
		return fmt.Errorf("tandem: llm: TensorSplit has %d entries for %d offload devices", len(split), cpu)
	}
	var sum float64
	for i, s := range split {
		if s < 0 || s != s {
			return fmt.Errorf("tandem: llm: TensorSplit[%d] = %g is negative", i, s)
		}
		sum += s
	}
	if sum <= 0 {
		return errors.New("tandem: llm: TensorSplit sums to 0")
	}
	// layers first..n (n is the output layer) are offloaded; layer k of those ngl goes to the
	// device whose cumulative share covers k.
	first := n + 1 - ngl
	for k := 0; k < ngl; k++ {
		il := first + k
		dev, acc := 0, 0.0
		for d, s := range split {
			acc += s / sum
			dev = d
			if float64(k)+0.5 < acc*float64(ngl) {
				break
			}
		}
		if il == n {
			m.outputDev = dev
		} else {
			m.layers[il].dev = dev
		}
	}
	return nil
}

// Vocab returns the model's tokenizer.
func (m *Model) Vocab() *Vocab { return m.vocab }

// Tokenize turns text into token ids; addSpecial adds BOS/EOS as the model's metadata says.
// Special-token text in the input (such as "<|im_start|>") becomes those tokens.
func (m *Model) Tokenize(text string, addSpecial bool) ([]int32, error) {
	if m == nil || m.vocab == nil {
		return nil, errZeroModel
	}
	return m.vocab.Tokenize(text, addSpecial)
}

// Detokenize turns ids back into text ("" for a zero Model).
func (m *Model) Detokenize(ids []int32) string {
	if m == nil || m.vocab == nil {
		return ""
	}
	return m.vocab.Detokenize(ids)
}

// errZeroModel and errZeroSession are the errors of a nil or zero Model and Session (one not made
// by Open or NewSession).
var (
	errZeroModel   = errors.New("tandem: llm: zero Model: open one with llm.Open")
	errZeroSession = errors.New("tandem: llm: zero Session: create one with Model.NewSession")
)

// LoadTime is how long Open took.
func (m *Model) LoadTime() time.Duration { return m.loadTime }

// FileSize is the model file's size in bytes.
func (m *Model) FileSize() int64 { return m.fileSize }

// Backends are the backends the model runs on, CPU last.
func (m *Model) Backends() []core.Backend { return append([]core.Backend(nil), m.backends...) }

// LayerBackend names where layer il's weights live (il = HParams.NLayer is the output layer).
func (m *Model) LayerBackend(il int) string {
	switch {
	case m == nil || len(m.backends) == 0:
		return ""
	case il == m.HParams.NLayer:
		return m.backends[m.outputDev].Name()
	case il >= 0 && il < len(m.layers):
		return m.backends[m.layers[il].dev].Name()
	}
	return ""
}

// WeightBytes is the size of the loaded weights per buffer type name.
func (m *Model) WeightBytes() map[string]int64 {
	out := map[string]int64{}
	if m.weights == nil {
		return out
	}
	for _, b := range append(append([]core.Buffer(nil), m.weights.Buffers...), m.extra...) {
		out[b.Type().Name()] += b.Size()
	}
	return out
}

// Close closes the model's open sessions, then frees the weights and the backends and connections
// the model opened. Calling Close twice is harmless.
func (m *Model) Close() error {
	if m == nil {
		return nil
	}
	var errs []error
	m.closeOnce.Do(func() {
		m.sessMu.Lock()
		m.closed = true
		open := make([]*Session, 0, len(m.sessions))
		for s := range m.sessions {
			open = append(open, s)
		}
		m.sessMu.Unlock()
		for _, s := range open {
			errs = append(errs, s.Close())
		}
		for _, b := range m.extra {
			errs = append(errs, b.Free())
		}
		if m.weights != nil {
			errs = append(errs, m.weights.Close())
		}
		if m.owned {
			for _, be := range m.backends {
				errs = append(errs, be.Close())
			}
		}
		for _, c := range m.clients {
			errs = append(errs, c.Close())
		}
	})
	return errors.Join(errs...)
}
