//go:build gl && cgo

package gl

import (
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/shaders/typelist"
)

// MUL_MAT (mat-vec and tiled kernels) and OUT_PROD, all in this file.
//
// mulMatDispatch is MUL_MAT's encoder: the mat-vec kernel (encodeMulMat) for up to
// mulMatVecMaxCols columns of B, the tiled kernel (encodeMulMatTiled) above. Both accept exactly
// what supportsMulMat accepts: weights of a type in typelist.MatMulWeights (the list the shader
// build makes variants for) with contiguous rows (any row and batch strides), f32 activations with
// contiguous rows (any strides or permutation of dims 1-3), broadcast over dims 2 and 3.

func init() {
	for _, name := range typelist.MatMulWeights {
		t, ok := core.TypeByName(name)
		if !ok {
			panic("gl: shader weight type " + name + " is not a core type")
		}
		unit := int64(2) // f16 and the quantized blocks are addressed in 16-bit words
		if t == core.TypeF32 {
			unit = 4
		}
		mulMatTypes[t] = mulMatType{name: name, unit: unit}
	}
	registerOp(core.OpMulMat, glOp{supports: supportsMulMat, encode: (*Backend).mulMatDispatch})
	registerOp(core.OpOutProd, glOp{supports: supportsOutProd, encode: (*Backend).encodeOutProd})
}

// mulMatType is a MUL_MAT weight type's shader name part and the unit (bytes) the shaders address
// it in.
type mulMatType struct {
	name string
	unit int64
}

// mulMatTypes are the MUL_MAT weight types, from typelist.MatMulWeights.
var mulMatTypes = map[core.Type]mulMatType{}

func supportsMulMat(d *device, t *core.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	if _, ok := mulMatTypes[a.Type]; !ok || b.Type != core.TypeF32 || t.Type != core.TypeF32 {
		return false
	}
	if a.Type != core.TypeF32 && !d.info.Features.StorageBuffer16BitAccess {
		return false
	}
	return a.Nb[0] == a.Type.Size() && b.Nb[0] == 4 && t.Nb[0] == 4 &&
		a.Ne[0]%a.Type.BlockSize() == 0 && b.Ne[2]%a.Ne[2] == 0 && b.Ne[3]%a.Ne[3] == 0
}

const mulMatVecPushSize = 19 * 4

func (b *Backend) encodeMulMat(c *commands, n *core.Tensor) error {
	a, x := n.Src[0], n.Src[1]
	mt := mulMatTypes[a.Type]
	name := "mul_mat_vec_" + mt.name + "_f32"
	info := b.vd.Info()
	wg := min(max(info.Subgroup.Size, 32), 128)
	rowsPerGroup := int64(1)
	switch {
	case info.Type == deviceTypeCPU:
		// llvmpipe: one invocation per row and no workgroup reduction. Measured on 4096²:
		// f32 0.64 → 1.63 GFLOPS, q4_0 0.88 → 1.81 (32 rows per workgroup beat 8, 16 and 64).
		name = "mul_mat_vec_rows_" + mt.name + "_f32"
		wg = max(info.Subgroup.Size, 32)
		rowsPerGroup = int64(wg)
	case info.Subgroup.Operations&subgroupArithmetic != 0 && info.Subgroup.Stages&0x20 != 0:
		name += "_subgroup"
	}
	p, err := b.pipeline(name, 3, mulMatVecPushSize, wg)
	if err != nil {
		return err
	}
	ops, err := b.bindNode(c, n, 4, use{a, mt.unit}, use{x, 4})
	if err != nil {
		return err
	}
	oa, ox, od := ops[0], ops[1], ops[2]
	// A strides in units of the shader's array (floats, halves or 16-bit words).
	au := mt.unit
	nbatch := x.Ne[2] * x.Ne[3]
	pc := b.pushMulMat(n, oa, ox, od, au)
	grid := [3]uint32{b.groups(a.Ne[1], rowsPerGroup, 0), b.groups(x.Ne[1], 1, 1), b.groups(nbatch, 1, 2)}
	return c.Dispatch(p, grid, pc.Bytes(), oa.bind, ox.bind, od.bind)
}

// pushMulMat packs the push constants the mat-vec and tiled MUL_MAT shaders share: sizes, offsets,
// the strides of A (in units of au bytes), B and dst (in floats), and the broadcast ratios.
func (b *Backend) pushMulMat(n *core.Tensor, oa, ox, od operand, au int64) *pushConsts {
	a, x := n.Src[0], n.Src[1]
	pc := b.push.Reset()
	pc.U32(u32(a.Ne[0]), u32(a.Ne[1]), u32(x.Ne[1]), u32(x.Ne[2]*x.Ne[3]))
	pc.U32(oa.offs, ox.offs, od.offs)
	pc.U32(u32(a.Nb[1]/au), u32(a.Nb[2]/au), u32(a.Nb[3]/au))
	pc.U32(u32(x.Nb[1]/4), u32(x.Nb[2]/4), u32(x.Nb[3]/4))
	pc.U32(u32(n.Nb[1]/4), u32(n.Nb[2]/4), u32(n.Nb[3]/4))
	pc.U32(u32(x.Ne[2]), u32(x.Ne[2]/a.Ne[2]), u32(x.Ne[3]/a.Ne[3]))
	return pc
}

// mulMatVecMaxCols is the largest B column count (ne11) that uses the mat-vec
// kernel (ggml's mul_mat_vec_max_cols).
const mulMatVecMaxCols = 8

// mulMatDispatch encodes a MUL_MAT node with the mat-vec kernel for few
// columns of B and the tiled kernel otherwise.
func (b *Backend) mulMatDispatch(c *commands, n *core.Tensor) error {
	cols := n.Src[1].Ne[1]
	// On CPU-type devices (lavapipe) the tiled kernel wins from two columns on (measured: n = 8
	// at ~5 GFLOPS tiled vs ~0.7 mat-vec); GPUs keep mat-vec up to 8 columns as ggml does.
	if cols > mulMatVecMaxCols || (cols >= 2 && b.vd.Info().Type == deviceTypeCPU) {
		return b.encodeMulMatTiled(c, n)
	}
	return b.encodeMulMat(c, n)
}

// mmTile is a tile configuration of mul_mm.comp: each workgroup computes
// bm x bn outputs, each invocation tm x tn of them.
type mmTile struct{ bm, bn, tm, tn uint32 }

func (t mmTile) wg() uint32 { return (t.bm / t.tm) * (t.bn / t.tn) }

// shared returns the bytes of shared memory the tile uses (BK = 32 floats of
// A and B per row/column).
func (t mmTile) shared() uint32 { return 32 * 4 * (t.bm + t.bn) }

// mmTilesGPU are the tiles for GPUs, large/medium/small, chosen like ggml's:
// small when M or N ≤ 32, medium when ≤ 64, large otherwise, with ggml-like
// register blocks (32 to 64 outputs per invocation).
var mmTilesGPU = [3]mmTile{{128, 128, 8, 8}, {64, 64, 4, 8}, {32, 32, 4, 4}}

// cpuTile is the tile for CPU devices (llvmpipe), which pay for every
// shared-memory load with a loop over the SIMD lanes: the register blocks are
// large (16 per side of 128, 8 per side of 32), and each side of the tile
// follows its own dimension, so a product with few columns takes a tall tile.
// Two sizes per side keep the number of pipelines (each one compiled by LLVM,
// 0.4 to 1.5 s) small. Measured on llvmpipe (f32, GFLOPS): 512x256x1024
// 64x64/8x8 10, 128x128/16x16 16; m=4096 n=32 k=288 32x32/8x8 3.3,
// 128x32/16x8 8.5.
func cpuTile(m, n int64) mmTile {
	t := mmTile{bm: 128, bn: 128, tm: 16, tn: 16}
	if m <= 32 {
		t.bm, t.tm = 32, 8
	}
	if n <= 32 {
		t.bn, t.tn = 32, 8
	}
	return t
}

// fitTile reports whether the device can run tile t.
func (b *Backend) fitTile(t mmTile) bool {
	l := b.vd.Info().Limits
	return t.wg() <= l.MaxComputeWorkGroupInvocations && t.wg() <= l.MaxComputeWorkGroupSize[0] &&
		t.shared() <= l.MaxComputeSharedMemorySize
}

// mulMatTile picks the tile for node n (M = ne0, N = ne1), falling back to
// smaller GPU tiles when the device's limits are too small.
func (b *Backend) mulMatTile(n *core.Tensor) (mmTile, bool) {
	if b.vd.Info().Type == deviceTypeCPU {
		if t := cpuTile(n.Ne[0], n.Ne[1]); b.fitTile(t) {
			return t, true
		}
	}
	i := 0
	if mn := min(n.Ne[0], n.Ne[1]); mn <= 32 {
		i = 2
	} else if mn <= 64 {
		i = 1
	}
	for ; i < len(mmTilesGPU); i++ {
		if b.fitTile(mmTilesGPU[i]) {
			return mmTilesGPU[i], true
		}
	}
	return mmTile{}, false
}

// encodeMulMatTiled encodes MUL_MAT with the tiled kernel and the default
// tile (the mat-vec kernel if no tile fits the device).
func (b *Backend) encodeMulMatTiled(c *commands, n *core.Tensor) error {
	t, ok := b.mulMatTile(n)
	if !ok {
		return b.encodeMulMat(c, n)
	}
	return b.encodeMulMatTiledWith(c, n, t)
}

// encodeMulMatTiledWith encodes MUL_MAT with mul_mm.comp and tile t. The push
// constants are those of the mat-vec kernel.
func (b *Backend) encodeMulMatTiledWith(c *commands, n *core.Tensor, t mmTile) error {
	a, x := n.Src[0], n.Src[1]
	mt := mulMatTypes[a.Type]
	oa, err := b.bindTensor(a, mt.unit)
	if err != nil {
		return err
	}
	ox, err := b.bindTensor(x, 4)
	if err != nil {
		return err
	}
	od, err := b.bindTensor(n, 4)
	if err != nil {
		return err
	}
	// ALIGNED bit 0: rows of B (and of f32/f16 A) start on 4-element
	// boundaries and K is a multiple of 4, so the shader reads them as vec4;
	// bit 1: dst rows likewise, written as vec4.
	au := mt.unit
	aligned := uint32(0)
	if a.Ne[0]%4 == 0 && ox.offs%4 == 0 && x.Nb[1]%16 == 0 && x.Nb[2]%16 == 0 && x.Nb[3]%16 == 0 &&
		(a.Type.IsQuantized() || oa.offs%4 == 0 && a.Nb[1]%(4*au) == 0 && a.Nb[2]%(4*au) == 0 && a.Nb[3]%(4*au) == 0) {
		aligned |= 1
	}
	if od.offs%4 == 0 && n.Nb[1]%16 == 0 && n.Nb[2]%16 == 0 && n.Nb[3]%16 == 0 {
		aligned |= 2
	}
	p, err := b.pipeline("mul_mm_"+mt.name+"_f32", 3, mulMatVecPushSize, t.wg(), t.bm, t.bn, t.tm, t.tn, aligned)
	if err != nil {
		return err
	}
	if err := b.sync(c, od, oa, ox); err != nil {
		return err
	}
	nbatch := x.Ne[2] * x.Ne[3]
	pc := b.pushMulMat(n, oa, ox, od, au)
	grid := [3]uint32{b.groups(a.Ne[1], int64(t.bm), 0), b.groups(x.Ne[1], int64(t.bn), 1), b.groups(nbatch, 1, 2)}
	return c.Dispatch(p, grid, pc.Bytes(), oa.bind, ox.bind, od.bind)
}

// OUT_PROD (out_prod.comp): a of a MUL_MAT weight type with contiguous dim 0,
// b f32 with any strides, dst f32.

const (
	outProdPushSize = 20 * 4
	outProdWG       = 64
)

func supportsOutProd(d *device, t *core.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	if _, ok := mulMatTypes[a.Type]; !ok || b.Type != core.TypeF32 || t.Type != core.TypeF32 {
		return false
	}
	if a.Type != core.TypeF32 && !d.info.Features.StorageBuffer16BitAccess {
		return false
	}
	return a.Nb[0] == a.Type.Size() && a.Ne[0]%a.Type.BlockSize() == 0 && floatStrides(b) && t.Nb[0] == 4 && floatStrides(t) &&
		a.Ne[1] == b.Ne[1] && t.Ne == [4]int64{a.Ne[0], b.Ne[0], b.Ne[2], b.Ne[3]} &&
		b.Ne[2]%a.Ne[2] == 0 && b.Ne[3]%a.Ne[3] == 0
}

// floatStrides reports whether every stride of t is a whole number of floats.
func floatStrides(t *core.Tensor) bool {
	return t.Nb[0]%4 == 0 && t.Nb[1]%4 == 0 && t.Nb[2]%4 == 0 && t.Nb[3]%4 == 0
}

func (b *Backend) encodeOutProd(c *commands, n *core.Tensor) error {
	a, x := n.Src[0], n.Src[1]
	mt := mulMatTypes[a.Type]
	p, err := b.pipeline("out_prod_"+mt.name+"_f32", 3, outProdPushSize, outProdWG)
	if err != nil {
		return err
	}
	ops, err := b.bindNode(c, n, 4, use{a, mt.unit}, use{x, 4})
	if err != nil {
		return err
	}
	oa, ox, od := ops[0], ops[1], ops[2]
	au := mt.unit
	nbatch := n.Ne[2] * n.Ne[3]
	pc := b.push.Reset()
	pc.U32(u32(n.Ne[0]), u32(n.Ne[1]), u32(a.Ne[1]), u32(nbatch), u32(n.Ne[2]))
	pc.U32(oa.offs, ox.offs, od.offs)
	pc.U32(u32(a.Nb[1]/au), u32(a.Nb[2]/au), u32(a.Nb[3]/au))
	pc.U32(u32(x.Nb[0]/4), u32(x.Nb[1]/4), u32(x.Nb[2]/4), u32(x.Nb[3]/4))
	pc.U32(u32(n.Nb[1]/4), u32(n.Nb[2]/4), u32(n.Nb[3]/4))
	pc.U32(u32(n.Ne[2]/a.Ne[2]), u32(n.Ne[3]/a.Ne[3]))
	grid := [3]uint32{b.groups(n.Ne[0], 4*outProdWG, 0), b.groups(n.Ne[1], 4, 1), b.groups(nbatch, 1, 2)}
	return c.Dispatch(p, grid, pc.Bytes(), oa.bind, ox.bind, od.bind)
}
