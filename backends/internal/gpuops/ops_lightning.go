package gpuops

import "github.com/tandem-ml/tandem/core"

// LIGHTNING_INDEXER (core.LightningIndexer; shaders/lightning_indexer.comp): a workgroup takes a
// tile of keys of one stream (converted to f32 once into shared memory with the row shaders'
// loaders, core/quant's arithmetic) and a chunk of tokens, a key per thread; each dot is summed
// serially and the heads in order as the CPU's reference kernel, so results match it bit for
// bit. Keys of every type with a float conversion that the row shaders load: f32, f16, bf16,
// i32, q4_0, q4_1, q8_0, q5_0, q5_1, the K-quants, q8_K, iq4_nl, iq4_xs, mxfp4, nvfp4, q1_0,
// tq1_0, tq2_0 and q2_0 (not q8_1, which no GPU shader reads).

func init() {
	registerOp(core.OpLightningIndexer, opImpl{supports: supportsLightning, encode: (*Encoder).encodeLightning})
}

// lightningKTypes are the key types with a lightning_indexer variant (shaders/internal/build's
// variants_lightning.go).
var lightningKTypes = map[core.Type]bool{
	core.TypeF32: true, core.TypeF16: true, core.TypeBF16: true, core.TypeI32: true, core.TypeQ4_0: true,
	core.TypeQ4_1: true, core.TypeQ8_0: true, core.TypeQ5_0: true, core.TypeQ5_1: true, core.TypeQ2_K: true,
	core.TypeQ3_K: true, core.TypeQ4_K: true, core.TypeQ5_K: true, core.TypeQ6_K: true, core.TypeQ8_K: true,
	core.TypeIQ4_NL: true, core.TypeIQ4_XS: true, core.TypeMXFP4: true, core.TypeNVFP4: true, core.TypeQ1_0: true,
	core.TypeTQ1_0: true, core.TypeTQ2_0: true, core.TypeQ2_0: true,
}

// lightningShared is the floats of keys the shader keeps in shared memory (LI_SHARED, 16 KiB:
// Vulkan's least maxComputeSharedMemorySize); keys longer than that are read from the key buffer
// for every token. lightningTokens are the most tokens of a work item; on a software device the
// shader's dot loop stays under softLoopLimit iterations an invocation (16 tokens of 32 heads of
// 128 elements gave NaN from token 16 on).
const (
	lightningShared = 4096
	lightningTokens = 64
)

// lightningPlan is how LIGHTNING_INDEXER node t is dispatched: kt keys a tile (0: rows too long
// for shared memory, read from the buffer, lightningWG keys a tile), tc tokens a work item and
// the number of work items (tiles x streams x token chunks). ok is false where a software
// device's invocations would run the dot loop more than softLoopLimit times (a token's heads
// alone, or more work items than workgroups).
func lightningPlan(d *Device, t *core.Tensor) (kt, tc, items int64, ok bool) {
	q, k := t.Src[0], t.Src[1]
	n, nh, nt := q.Ne[0], q.Ne[1], q.Ne[2]
	kt = lightningWG
	if n > 0 {
		kt = min(kt, lightningShared/n)
	}
	perToken := max(1, n*nh) // dot-loop iterations a token takes an invocation
	tc = min(lightningTokens, max(1, softLoopLimit/perToken))
	per := kt
	if per == 0 {
		per = lightningWG
	}
	items = (k.Ne[2] + per - 1) / per * q.Ne[3] * ((nt + tc - 1) / tc)
	groups := int64(d.MaxComputeWorkGroupCount[0])
	ok = !d.Software || perToken <= softLoopLimit && items <= groups
	return kt, tc, items, ok
}

// supportsLightning: a node as core.LightningIndexer builds it (shapes, f32 q and weights, f16
// mask), keys of a type above, 16-bit storage for the mask, every tensor addressable in its
// shader's units.
func supportsLightning(d *Device, t *core.Tensor) bool {
	if !core.LightningIndexerNodeValid(t) {
		return false
	}
	q, k, w, m := t.Src[0], t.Src[1], t.Src[2], t.Src[3]
	if !d.Storage16Bit || !lightningKTypes[k.Type] || !typeOK(d, k.Type) {
		return false
	}
	for _, x := range []*core.Tensor{q, w, t} {
		if !eltAddressable(x, 4) || x.NElements() >= maxShaderIndex {
			return false
		}
	}
	if !eltAddressable(m, 2) || !stridesIn(k, elemTypes[k.Type].unit) || !wholeBlocks(k) ||
		m.NElements() >= maxShaderIndex || k.NElements() >= maxShaderIndex {
		return false
	}
	_, _, _, ok := lightningPlan(d, t)
	return ok
}

const (
	lightningPushSize = 29 * 4
	lightningWG       = 32
)

func (e *Encoder) encodeLightning(n *core.Tensor) error {
	q, k, w, m := n.Src[0], n.Src[1], n.Src[2], n.Src[3]
	ku := elemTypes[k.Type].unit
	if n.NElements() == 0 {
		return nil
	}
	p, err := e.pipeline("lightning_indexer_"+elemTypes[k.Type].name, 5, lightningPushSize, lightningWG)
	if err != nil {
		return err
	}
	ops, err := e.bindNode(n, 4, use{q, 4}, use{k, ku}, use{w, 4}, use{m, 2})
	if err != nil {
		return err
	}
	oq, ok, ow, om, od := ops[0], ops[1], ops[2], ops[3], ops[4]
	pc := e.push.Reset()
	pc.U32(u32(q.Ne[0]), u32(q.Ne[1]), u32(q.Ne[2]), u32(q.Ne[3]), u32(k.Ne[2]), u32(m.Ne[3]))
	pc.U32(u32(q.Nb[0]/4), u32(q.Nb[1]/4), u32(q.Nb[2]/4), u32(q.Nb[3]/4))
	pc.U32(u32(k.Nb[0]/ku), u32(k.Nb[2]/ku), u32(k.Nb[3]/ku))
	pc.U32(u32(w.Nb[0]/4), u32(w.Nb[1]/4), u32(w.Nb[3]/4))
	pc.U32(u32(m.Nb[0]/2), u32(m.Nb[1]/2), u32(m.Nb[3]/2))
	pc.U32(u32(n.Nb[0]/4), u32(n.Nb[1]/4), u32(n.Nb[3]/4))
	kt, tc, items, _ := lightningPlan(e.dev, n)
	pc.U32(oq.offs, ok.offs, ow.offs, om.offs, od.offs, u32(kt), u32(tc))
	return e.dispatch(p, [3]uint32{e.groups(items, 1, 0), 1, 1}, pc.Bytes(), oq.bind, ok.bind, ow.bind, om.bind, od.bind)
}
