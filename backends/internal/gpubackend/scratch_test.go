package gpubackend

import (
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/internal/gpuops"
	"github.com/tandem-ml/tandem/backends/internal/gputest"
	"github.com/tandem-ml/tandem/core"
)

// The scratch buffer of the op encoders, seen from the shell: sized before recording for the
// graph's largest user, kept across graphs, freed on Close, and ordered by barriers like any
// other buffer (the split FLASH_ATTN_EXT writes it in pass 1 and reads it in pass 2).

// traceDispatcher records the dispatches (pipeline name and bindings) and barriers of its graphs.
type traceDispatcher struct {
	events []traceEvent
}

type traceEvent struct {
	name     string // pipeline, or "barrier"
	bindings []gpuops.Binding
}

func (f *traceDispatcher) Pipeline(name string, bindings int, push uint32, spec []uint32) (gpuops.Pipeline, error) {
	return name, nil
}

func (f *traceDispatcher) Run(record func(Queue) error) error { return record(traceQueue{f}) }

type traceQueue struct{ f *traceDispatcher }

func (q traceQueue) Dispatch(p gpuops.Pipeline, groups [3]uint32, push []byte, bindings []gpuops.Binding) error {
	q.f.events = append(q.f.events, traceEvent{name: p.(string), bindings: append([]gpuops.Binding(nil), bindings...)})
	return nil
}

func (q traceQueue) Barrier() error {
	q.f.events = append(q.f.events, traceEvent{name: "barrier"})
	return nil
}

func (q traceQueue) EndNode() error { return nil }

func TestScratchFlashAttnSplit(t *testing.T) {
	d := newFakeDevice(fakeAPI, "Fake0")
	disp := &traceDispatcher{}
	b := NewBackend(d.Device, disp)
	// Two independent decode-shaped attentions (one query row, 8 heads over 2 KV heads, 700 and
	// 300 keys) added: nothing but the scratch orders them.
	g := gputest.Graph(t, b, func(c *core.Context) *core.Tensor {
		fa := func(nkv int64) *core.Tensor {
			q := c.NewTensor(core.TypeF32, 64, 1, 8, 1)
			k := c.NewTensor(core.TypeF16, 64, nkv, 2, 1)
			v := c.NewTensor(core.TypeF16, 64, nkv, 2, 1)
			m := c.NewTensor(core.TypeF16, nkv, 1, 1, 1)
			return c.FlashAttnExt(q, k, v, m, 0.125, 0, 0)
		}
		return c.Add(fa(700), fa(300))
	})
	if err := b.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range disp.events {
		names = append(names, e.name)
	}
	got := strings.Join(names, " ")
	want := "flash_attn_split_kf16_vf16_mask_f16 barrier flash_attn_split_combine barrier " +
		"flash_attn_split_kf16_vf16_mask_f16 barrier flash_attn_split_combine barrier add_f32"
	if got != want {
		t.Fatalf("recorded %q, want %q", got, want)
	}
	scratch := disp.events[0].bindings[4].Buf
	// 8 query rows of 64 floats plus 2: 11 splits of 64 keys for 700 keys.
	if s := disp.events[0].bindings[4].Size; s != 8*11*66*4 {
		t.Errorf("first node's partials bound as %d bytes, want %d", s, 8*11*66*4)
	}
	for _, i := range []int{2, 4, 6} {
		if buf := disp.events[i].bindings[map[int]int{2: 0, 4: 4, 6: 0}[i]].Buf; buf != scratch {
			t.Errorf("dispatch %d (%s) does not bind the scratch buffer", i, disp.events[i].name)
		}
	}
	sa := scratch.(*fakeMem)
	if sa.Size() < 8*11*66*4 {
		t.Errorf("scratch of %d bytes", sa.Size())
	}
	disp.events = nil
	if err := b.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	if len(disp.events) == 0 || disp.events[0].bindings[4].Buf != scratch {
		t.Error("the second run of the graph allocated another scratch buffer")
	}
	b.Encoder().UseFlashAttnSplit(false)
	disp.events = nil
	if err := b.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	if disp.events[0].name != "flash_attn_ext_kf16_vf16_mask_f16" {
		t.Errorf("split off: first dispatch %s", disp.events[0].name)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if !sa.freed {
		t.Error("Close left the scratch buffer allocated")
	}
}
