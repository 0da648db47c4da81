package gpuops

import (
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/shaders/typelist"
)

// MUL_MAT (mat-vec and tiled kernels) and OUT_PROD, all in this file.
//
// mulMatDispatch is MUL_MAT's encoder: the mat-vec kernel (encodeMulMat) for up to
// mulMatVecMaxCols columns of B, the tiled kernel (encodeMulMatTiled) above. Both accept exactly
// what supportsMulMat accepts: weights of a type in typelist.MatMulWeights (the list the shader
// build makes variants for) with contiguous rows (any row and batch strides), f32 activations (or
// f16 ones for the weight types of typelist.MatMulF16B) with contiguous rows (any strides or permutation of dims 1-3), broadcast over dims 2 and 3.

func init() {
	for _, name := range typelist.MatMulWeights {
		t, ok := core.TypeByName(name)
		if !ok {
			panic("gpuops: shader weight type " + name + " is not a core type")
		}
		unit := int64(2) // f16 and the quantized blocks are addressed in 16-bit words
		switch t {
		case core.TypeF32:
			unit = 4
		case core.TypeMXFP4:
			unit = 1 // 17-byte blocks: addressed in bytes (shaders/kquants.glsl's KQ_BYTES)
		}
		mulMatTypes[t] = mulMatType{name: name, unit: unit}
	}
	registerOp(core.OpMulMat, opImpl{supports: supportsMulMat, encode: (*Encoder).mulMatDispatch})
	registerOp(core.OpOutProd, opImpl{supports: supportsOutProd, encode: (*Encoder).encodeOutProd})
}

// MulMatTypes returns the MUL_MAT weight types (typelist.MatMulWeights), in the list's order.
func MulMatTypes() []core.Type {
	out := make([]core.Type, 0, len(typelist.MatMulWeights))
	for _, name := range typelist.MatMulWeights {
		t, _ := core.TypeByName(name)
		out = append(out, t)
	}
	return out
}

// MulMatKernel names a MUL_MAT kernel for UseMulMat.
type MulMatKernel int

const (
	MulMatAuto      MulMatKernel = iota // by shape and device (mulMatDispatch)
	MulMatVec                           // the mat-vec kernel
	MulMatTiled                         // the tiled kernel with the device's tile for the shape
	MulMatTiledWith                     // the tiled kernel with a given tile
)

// UseMulMat makes e encode every MUL_MAT node with kernel k (and tile, for MulMatTiledWith), for
// tests and benchmarks that prove one kernel; MulMatAuto restores the default choice.
func (e *Encoder) UseMulMat(k MulMatKernel, tile Tile) {
	e.gen++
	switch k {
	case MulMatVec:
		e.mulMat = (*Encoder).encodeMulMat
	case MulMatTiled:
		e.mulMat = (*Encoder).encodeMulMatTiled
	case MulMatTiledWith:
		e.mulMat = func(e *Encoder, n *core.Tensor) error { return e.encodeMulMatTiledWith(n, tile) }
	default:
		e.mulMat = nil
	}
}

// mulMatType is a MUL_MAT weight type's shader name part and the unit (bytes) the shaders address
// it in.
type mulMatType struct {
	name string
	unit int64
}

// mulMatTypes are the MUL_MAT weight types, from typelist.MatMulWeights.
var mulMatTypes = map[core.Type]mulMatType{}

// mulMatF16B are the weight types with f16-activation variants (typelist.MatMulF16B).
var mulMatF16B = map[core.Type]bool{}

func init() {
	for _, name := range typelist.MatMulF16B {
		t, ok := core.TypeByName(name)
		if !ok {
			panic("gpuops: shader weight type " + name + " is not a core type")
		}
		mulMatF16B[t] = true
	}
}

// mulMatB returns the shader name part of MUL_MAT's activation type and the unit (bytes) its
// shaders address it in: f32, or f16 for the weight types of typelist.MatMulF16B.
func mulMatB(n *core.Tensor) (string, int64) {
	if n.Src[1].Type == core.TypeF16 {
		return "f16", 2
	}
	return "f32", 4
}

func supportsMulMat(d *Device, t *core.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	if _, ok := mulMatTypes[a.Type]; !ok || t.Type != core.TypeF32 {
		return false
	}
	if b.Type != core.TypeF32 && !(b.Type == core.TypeF16 && mulMatF16B[a.Type]) {
		return false
	}
	if (a.Type != core.TypeF32 || b.Type != core.TypeF32) && !d.Storage16Bit {
		return false
	}
	return a.Nb[0] == a.Type.Size() && b.Nb[0] == b.Type.Size() && t.Nb[0] == 4 &&
		a.Ne[0]%a.Type.BlockSize() == 0 && b.Ne[2]%a.Ne[2] == 0 && b.Ne[3]%a.Ne[3] == 0
}

const mulMatVecPushSize = 19 * 4

// encodeMulMat encodes MUL_MAT with the mat-vec kernel of the device: mul_mat_vec_rows.comp on
// software devices (or with KernelsEnv=cpu), mul_mat_vec.comp with mulMatVecShape's workgroup
// otherwise.
func (e *Encoder) encodeMulMat(n *core.Tensor) error {
	soft, err := e.softwareKernels()
	if err != nil {
		return err
	}
	if soft {
		// llvmpipe: one invocation per row and no workgroup reduction. Measured on 4096²:
		// f32 0.64 → 1.63 GFLOPS, q4_0 0.88 → 1.81 (32 rows per workgroup beat 8, 16 and 64).
		wg := max(e.dev.SubgroupSize, 32)
		return e.encodeMulMatVecKernel(n, "mul_mat_vec_rows_", wg, int64(wg), false)
	}
	wg, rows := e.dev.mulMatVecShape(n)
	return e.encodeMulMatVecKernel(n, "mul_mat_vec_", wg, int64(rows), true)
}

// mulMatVecShape returns mul_mat_vec.comp's workgroup size and rows per workgroup for node n on
// device d: one subgroup (at least 32 invocations: one step of a 2048-wide row is 32 chunks of
// 32 elements, and the reduction needs no barrier), one row per workgroup for fewer than 1024
// rows (each workgroup then has the least work to wait for), four rows for the block types
// above (each chunk of B serves four rows, four rows' loads in flight) and for the float types
// from 16384 rows on (below, one row per workgroup keeps more workgroups resident). Measured on
// an NVIDIA H200 (subgroup 32) with BenchmarkMatVecGPU's device time per node, workgroup size
// and rows 32/1, 32/2, 32/4, 64/1, 64/2, 64/4, 128/1, 128/2: q4_0 2048x2048 9.0, 7.2, 7.3, 9.3,
// 7.1, 7.3, 9.9, 7.9 µs; 5632x2048 17.7, 12.2, 10.4, 17.9, 12.0, 9.9, 20.6, 15.0; 32000x2048
// 75, 44, 31, 81, 58, 32, 92, 58; 256x2048 4.9, 5.1, 6.0, 4.7, 4.6, 5.5, 5.1, 5.5; f16
// 5632x2048 10.7, 16.3, 30.4, 11.4, 10.8, 23.3, 13.9, 12.3; 32000x2048 142, 123, 114, 180,
// 145, 136, 178, 201.
func (d *Device) mulMatVecShape(n *core.Tensor) (wg, rows uint32) {
	wg = min(max(d.SubgroupSize, 32), 128, d.MaxComputeWorkGroupSize[0], d.MaxComputeWorkGroupInvocations)
	m := n.Src[0].Ne[1]
	switch {
	case m < 1024:
		rows = 1
	case n.Src[0].Type.IsQuantized() || m >= 16384:
		rows = 4
	default:
		rows = 1
	}
	return wg, rows
}

// UseMulMatVec makes e encode every MUL_MAT node with mul_mat_vec.comp (the GPUs' mat-vec
// kernel, whatever the device), wg invocations and rows rows per workgroup, for tests and
// benchmarks; UseMulMat(MulMatAuto, Tile{}) restores the default choice.
func (e *Encoder) UseMulMatVec(wg, rows uint32) {
	e.gen++
	e.mulMat = func(e *Encoder, n *core.Tensor) error {
		return e.encodeMulMatVecKernel(n, "mul_mat_vec_", wg, int64(rows), true)
	}
}

// encodeMulMatVecKernel encodes MUL_MAT with the mat-vec shader named prefix (mul_mat_vec_ or
// mul_mat_vec_rows_), wg invocations per workgroup and rows rows per workgroup; spec passes
// rows and the alignment flag of mul_mat_vec.comp as its specialization constants 1 and 2.
func (e *Encoder) encodeMulMatVecKernel(n *core.Tensor, prefix string, wg uint32, rows int64, spec bool) error {
	a, x := n.Src[0], n.Src[1]
	mt := mulMatTypes[a.Type]
	bname, bu := mulMatB(n)
	name := prefix + mt.name + "_" + bname
	if spec && e.dev.SubgroupArithmetic {
		name += "_subgroup"
	}
	ops, err := e.bindNode(n, 4, use{a, mt.unit}, use{x, bu})
	if err != nil {
		return err
	}
	oa, ox, od := ops[0], ops[1], ops[2]
	var p Pipeline
	if spec {
		p, err = e.pipeline(name, 3, mulMatVecPushSize, wg, uint32(rows), mulMatAligned(n, oa, ox, od)&1)
	} else {
		p, err = e.pipeline(name, 3, mulMatVecPushSize, wg)
	}
	if err != nil {
		return err
	}
	// A strides in units of the shader's array (floats, halves or 16-bit words).
	au := mt.unit
	nbatch := x.Ne[2] * x.Ne[3]
	pc := e.pushMulMat(n, oa, ox, od, au, bu)
	grid := [3]uint32{e.groups(a.Ne[1], rows, 0), e.groups(x.Ne[1], 1, 1), e.groups(nbatch, 1, 2)}
	return e.dispatch(p, grid, pc.Bytes(), oa.bind, ox.bind, od.bind)
}

// mulMatAligned returns the alignment flags of mul_mm.comp (and bit 0 for mul_mat_vec.comp)
// for node n with A, B and dst bound at oa, ox and od: bit 0 when K is a multiple of 4 and the
// rows of B (and of f32/f16 A) start on 4-element boundaries, so they are read as vec4; bit 1
// when dst's rows do likewise (written as vec4).
func mulMatAligned(n *core.Tensor, oa, ox, od operand) uint32 {
	a, x := n.Src[0], n.Src[1]
	au := mulMatTypes[a.Type].unit
	_, bu := mulMatB(n)
	aligned := uint32(0)
	if a.Ne[0]%4 == 0 && ox.offs%4 == 0 && x.Nb[1]%(4*bu) == 0 && x.Nb[2]%(4*bu) == 0 && x.Nb[3]%(4*bu) == 0 &&
		(a.Type.IsQuantized() || oa.offs%4 == 0 && a.Nb[1]%(4*au) == 0 && a.Nb[2]%(4*au) == 0 && a.Nb[3]%(4*au) == 0) {
		aligned |= 1
	}
	if od.offs%4 == 0 && n.Nb[1]%16 == 0 && n.Nb[2]%16 == 0 && n.Nb[3]%16 == 0 {
		aligned |= 2
	}
	return aligned
}

// pushMulMat packs the push constants the mat-vec and tiled MUL_MAT shaders share: sizes, offsets,
// the strides of A (in units of au bytes), B (in units of bu bytes) and dst (in floats), and the
// broadcast ratios.
func (e *Encoder) pushMulMat(n *core.Tensor, oa, ox, od operand, au, bu int64) *Push {
	a, x := n.Src[0], n.Src[1]
	pc := e.push.Reset()
	pc.U32(u32(a.Ne[0]), u32(a.Ne[1]), u32(x.Ne[1]), u32(x.Ne[2]*x.Ne[3]))
	pc.U32(oa.offs, ox.offs, od.offs)
	pc.U32(u32(a.Nb[1]/au), u32(a.Nb[2]/au), u32(a.Nb[3]/au))
	pc.U32(u32(x.Nb[1]/bu), u32(x.Nb[2]/bu), u32(x.Nb[3]/bu))
	pc.U32(u32(n.Nb[1]/4), u32(n.Nb[2]/4), u32(n.Nb[3]/4))
	pc.U32(u32(x.Ne[2]), u32(x.Ne[2]/a.Ne[2]), u32(x.Ne[3]/a.Ne[3]))
	return pc
}

// mulMatVecMaxCols is the largest B column count (ne11) that uses the mat-vec
// kernel (ggml's mul_mat_vec_max_cols).
const mulMatVecMaxCols = 8

// mulMatDispatch encodes a MUL_MAT node with the mat-vec kernel for few
// columns of B and the tiled kernel otherwise.
func (e *Encoder) mulMatDispatch(n *core.Tensor) error {
	cols := n.Src[1].Ne[1]
	// On CPU-type devices (lavapipe) the tiled kernel wins from two columns on (measured: n = 8
	// at ~5 GFLOPS tiled vs ~0.7 mat-vec); GPUs keep mat-vec up to 8 columns as ggml does.
	soft, err := e.softwareKernels()
	if err != nil {
		return err
	}
	if cols > mulMatVecMaxCols || (cols >= 2 && soft) {
		return e.encodeMulMatTiled(n)
	}
	return e.encodeMulMat(n)
}

// Tile is a tile configuration of mul_mm.comp: each workgroup computes
// bm x bn outputs, each invocation tm x tn of them.
type Tile struct{ BM, BN, TM, TN uint32 }

func (t Tile) WG() uint32 { return (t.BM / t.TM) * (t.BN / t.TN) }

// shared returns the bytes of shared memory the tile uses (BK = 32 floats of
// A and B per row/column).
func (t Tile) Shared() uint32 { return 32 * 4 * (t.BM + t.BN) }

// GPUTiles are the tiles for GPUs, large/medium/small, chosen like ggml's:
// small when M or N ≤ 32, medium when ≤ 64, large otherwise, with ggml-like
// register blocks (32 to 64 outputs per invocation).
var GPUTiles = [3]Tile{{128, 128, 8, 8}, {64, 64, 4, 8}, {32, 32, 4, 4}}

// cpuTile is the tile for CPU devices (llvmpipe), which pay for every
// shared-memory load with a loop over the SIMD lanes: the register blocks are
// large (16 per side of 128, 8 per side of 32), and each side of the tile
// follows its own dimension, so a product with few columns takes a tall tile.
// Two sizes per side keep the number of pipelines (each one compiled by LLVM,
// 0.4 to 1.5 s) small. Measured on llvmpipe (f32, GFLOPS): 512x256x1024
// 64x64/8x8 10, 128x128/16x16 16; m=4096 n=32 k=288 32x32/8x8 3.3,
// 128x32/16x8 8.5.
func cpuTile(m, n int64) Tile {
	t := Tile{BM: 128, BN: 128, TM: 16, TN: 16}
	if m <= 32 {
		t.BM, t.TM = 32, 8
	}
	if n <= 32 {
		t.BN, t.TN = 32, 8
	}
	return t
}

// FitTile reports whether device d can run tile t.
func (d *Device) FitTile(t Tile) bool {
	return t.WG() <= d.MaxComputeWorkGroupInvocations && t.WG() <= d.MaxComputeWorkGroupSize[0] &&
		t.Shared() <= d.MaxComputeSharedMemorySize
}

// gridShared is the shared memory, in bytes, that the shaders of weight type a take besides a
// tile's: the IQ3, IQ2 and IQ1 grids, which they copy into shared memory (shaders/iq3_grids.glsl,
// iq_grids.glsl).
func gridShared(a core.Type) uint32 {
	switch a {
	case core.TypeIQ2_XXS:
		return 512
	case core.TypeIQ2_XS, core.TypeIQ3_XXS:
		return 1024
	case core.TypeIQ2_S, core.TypeIQ3_S:
		return 2048
	case core.TypeIQ1_S, core.TypeIQ1_M:
		return 4096
	}
	return 0
}

// fitTileFor reports whether device d can run tile t over weights of type a.
func (d *Device) fitTileFor(t Tile, a core.Type) bool {
	return d.FitTile(t) && t.Shared()+gridShared(a) <= d.MaxComputeSharedMemorySize
}

// mulMatTile picks the tile for node n (M = ne0, N = ne1): cpuTile when soft (the software
// devices' kernels), else a GPU tile, falling back to smaller ones when the device's limits are
// too small.
func (d *Device) mulMatTile(n *core.Tensor, soft bool) (Tile, bool) {
	if soft {
		if t := cpuTile(n.Ne[0], n.Ne[1]); d.fitTileFor(t, n.Src[0].Type) {
			return t, true
		}
	}
	i := 0
	if mn := min(n.Ne[0], n.Ne[1]); mn <= 32 {
		i = 2
	} else if mn <= 64 {
		i = 1
	}
	for ; i < len(GPUTiles); i++ {
		if d.fitTileFor(GPUTiles[i], n.Src[0].Type) {
			return GPUTiles[i], true
		}
	}
	return Tile{}, false
}

// encodeMulMatTiled encodes MUL_MAT with the tiled kernel and the default
// tile (the mat-vec kernel if no tile fits the device).
func (e *Encoder) encodeMulMatTiled(n *core.Tensor) error {
	soft, err := e.softwareKernels()
	if err != nil {
		return err
	}
	t, ok := e.dev.mulMatTile(n, soft)
	if !ok {
		return e.encodeMulMat(n)
	}
	return e.encodeMulMatTiledWith(n, t)
}

// encodeMulMatTiledWith encodes MUL_MAT with mul_mm.comp and tile t. The push
// constants are those of the mat-vec kernel.
func (e *Encoder) encodeMulMatTiledWith(n *core.Tensor, t Tile) error {
	a, x := n.Src[0], n.Src[1]
	mt := mulMatTypes[a.Type]
	bname, bu := mulMatB(n)
	oa, err := e.bindTensor(a, mt.unit)
	if err != nil {
		return err
	}
	ox, err := e.bindTensor(x, bu)
	if err != nil {
		return err
	}
	od, err := e.bindTensor(n, 4)
	if err != nil {
		return err
	}
	au := mt.unit
	aligned := mulMatAligned(n, oa, ox, od)
	p, err := e.pipeline("mul_mm_"+mt.name+"_"+bname, 3, mulMatVecPushSize, t.WG(), t.BM, t.BN, t.TM, t.TN, aligned)
	if err != nil {
		return err
	}
	if err := e.sync(od, oa, ox); err != nil {
		return err
	}
	nbatch := x.Ne[2] * x.Ne[3]
	pc := e.pushMulMat(n, oa, ox, od, au, bu)
	grid := [3]uint32{e.groups(a.Ne[1], int64(t.BM), 0), e.groups(x.Ne[1], int64(t.BN), 1), e.groups(nbatch, 1, 2)}
	return e.dispatch(p, grid, pc.Bytes(), oa.bind, ox.bind, od.bind)
}

// OUT_PROD (out_prod.comp): a of a MUL_MAT weight type with contiguous dim 0,
// b f32 with any strides, dst f32.

const (
	outProdPushSize = 20 * 4
	outProdWG       = 64
)

func supportsOutProd(d *Device, t *core.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	if _, ok := mulMatTypes[a.Type]; !ok || b.Type != core.TypeF32 || t.Type != core.TypeF32 {
		return false
	}
	if a.Type != core.TypeF32 && !d.Storage16Bit {
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

func (e *Encoder) encodeOutProd(n *core.Tensor) error {
	a, x := n.Src[0], n.Src[1]
	mt := mulMatTypes[a.Type]
	p, err := e.pipeline("out_prod_"+mt.name+"_f32", 3, outProdPushSize, outProdWG)
	if err != nil {
		return err
	}
	ops, err := e.bindNode(n, 4, use{a, mt.unit}, use{x, 4})
	if err != nil {
		return err
	}
	oa, ox, od := ops[0], ops[1], ops[2]
	au := mt.unit
	nbatch := n.Ne[2] * n.Ne[3]
	pc := e.push.Reset()
	pc.U32(u32(n.Ne[0]), u32(n.Ne[1]), u32(a.Ne[1]), u32(nbatch), u32(n.Ne[2]))
	pc.U32(oa.offs, ox.offs, od.offs)
	pc.U32(u32(a.Nb[1]/au), u32(a.Nb[2]/au), u32(a.Nb[3]/au))
	pc.U32(u32(x.Nb[0]/4), u32(x.Nb[1]/4), u32(x.Nb[2]/4), u32(x.Nb[3]/4))
	pc.U32(u32(n.Nb[1]/4), u32(n.Nb[2]/4), u32(n.Nb[3]/4))
	pc.U32(u32(n.Ne[2]/a.Ne[2]), u32(n.Ne[3]/a.Ne[3]))
	grid := [3]uint32{e.groups(n.Ne[0], 4*outProdWG, 0), e.groups(n.Ne[1], 4, 1), e.groups(nbatch, 1, 2)}
	return e.dispatch(p, grid, pc.Bytes(), oa.bind, ox.bind, od.bind)
}
