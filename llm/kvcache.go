package llm

import (
	"errors"
	"fmt"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/core"
)

// kvPad is the granularity of the cache size and of the attended length: consecutive tokens'
// graphs share their shapes within a block of kvPad cells (llama.cpp pads to 256 as well).
const kvPad = 256

// kvCache holds one session's keys and values: per layer a K tensor [n_embd_k_gqa, size] and a V
// tensor [n_embd_v_gqa, size] on the layer's device. Cell c holds position c (one sequence). With
// vTrans the V tensor is stored transposed (element (cell c, feature j) at j·size + c), which is
// what the soft_max attention path multiplies without a copy; flash attention reads V by rows.
type kvCache struct {
	size   int
	typ    core.Type
	vTrans bool
	k, v   []*core.Tensor
	bufs   []core.Buffer
}

func padTo(n, p int) int { return (n + p - 1) / p * p }

// newKVCache allocates a cache of size cells of type typ for m's layers, each on its device, and
// zeroes it (masked cells are multiplied by 0 in the soft_max path, so they must not hold NaN).
func newKVCache(m *Model, size int, typ core.Type, vTrans bool) (*kvCache, error) {
	h := &m.HParams
	c := &kvCache{size: size, typ: typ, vTrans: vTrans}
	c.k = make([]*core.Tensor, h.NLayer)
	c.v = make([]*core.Tensor, h.NLayer)
	ctxs := map[int]*core.Context{}
	for il := range m.layers {
		dev := m.layers[il].dev
		ctx := ctxs[dev]
		if ctx == nil {
			ctx = core.NewContext(core.ContextParams{NoAlloc: true})
			ctxs[dev] = ctx
		}
		c.k[il] = ctx.NewTensor2D(typ, int64(h.NEmbdKGQA()), int64(size)).SetName(fmt.Sprintf("cache_k_l%d", il))
		c.v[il] = ctx.NewTensor2D(typ, int64(h.NEmbdVGQA()), int64(size)).SetName(fmt.Sprintf("cache_v_l%d", il))
	}
	for dev := range m.backends {
		ctx := ctxs[dev]
		if ctx == nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			c.free()
			return nil, core.Errorf("tandem: llm: KV cache: %w", err)
		}
		buf, err := alloc.AllocCtxTensorsWithOptions(ctx, m.backends[dev].DefaultBufferType(),
			alloc.CtxAllocOptions{NoExtraBufferTypes: true})
		if err != nil {
			c.free()
			return nil, core.Errorf("tandem: llm: allocating the KV cache on %s: %w", m.backends[dev].Name(), err)
		}
		c.bufs = append(c.bufs, buf)
		buf.SetUsage(core.BufferUsageCompute)
		if err := buf.Clear(0); err != nil {
			c.free()
			return nil, core.Errorf("tandem: llm: clearing the KV cache on %s: %w", m.backends[dev].Name(), err)
		}
	}
	return c, nil
}

// bytes is the cache's memory.
func (c *kvCache) bytes() int64 {
	var n int64
	for _, b := range c.bufs {
		n += b.Size()
	}
	return n
}

func (c *kvCache) free() error {
	var errs []error
	for _, b := range c.bufs {
		errs = append(errs, b.Free())
	}
	c.bufs = nil
	return errors.Join(errs...)
}
