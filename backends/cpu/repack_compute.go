package cpu

import (
	"fmt"

	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
)

// How the CPU backend computes nodes that read tensors in CPU_REPACK buffers:
//   - MUL_MAT with a repacked tensor (not a view) as src0, f32 or vec-dot-type activations and
//     dense f32 dst rows runs the repacked GEMM (kern.GemmRepacked) on the repacked bytes, the
//     activations converted to Q8_0 (Q8_1 for Q4_1) as on the plain path; with Options.Reference
//     it takes the unpacked path below, so the reference never reads the repacked layout.
//   - GET_ROWS with a repacked src0 (not a view) unpacks just the rows it gathers.
//   - MUL_MAT_ID with repacked expert weights runs the same repacked GEMM expert by expert, on
//     each expert's slice (ops_mulmat_id.go); with Options.Reference it takes the unpacked path.
//   - Any other node reading memory of a CPU_REPACK buffer (other ops, views of repacked tensors,
//     tensors stored as-is there) is computed as a shadow: a copy of the node whose such sources
//     are replaced by standard copies in a host buffer of the plan, refreshed from the weights
//     (through the buffer's GetTensor) before every run.
// Nodes never write into CPU_REPACK memory: a dst there is an error (no host memory).

// repackRouted returns the mask of n's sources (bit j for Src[j]) that n's kernel reads in the
// repacked layout.
func repackRouted(n *core.Tensor, ref bool) uint16 {
	a := n.Src[0]
	if _, _, ok := repackedOf(a); !ok {
		return 0
	}
	switch n.Op {
	case core.OpGetRows:
		return 1
	case core.OpMulMatID: // expert by expert through the MUL_MAT machinery (ops_mulmat_id.go)
		if ref || !mulMatIDSupports(n) {
			return 0
		}
		return 1
	case core.OpMulMat:
		b := n.Src[1]
		if ref || b == nil || (b.Type != core.TypeF32 && b.Type != a.Type.VecDotType()) || b.Nb[0] != b.Type.Size() {
			return 0
		}
		if b.Type == core.TypeF32 && (b.Nb[1]%4 != 0) {
			return 0
		}
		if n.Nb[0] != 4 || n.Nb[1]%4 != 0 || n.Nb[1]/4 < n.Ne[0] || a.Ne[2] == 0 || a.Ne[3] == 0 ||
			b.Ne[2]%a.Ne[2] != 0 || b.Ne[3]%a.Ne[3] != 0 {
			return 0
		}
		return 1
	}
	return 0
}

// repackMask returns the mask of n's sources whose memory is a CPU_REPACK buffer.
func repackMask(n *core.Tensor) uint16 {
	var m uint16
	for j, s := range n.Src {
		if inRepackBuffer(s) {
			m |= 1 << j
		}
	}
	return m
}

// repackPlan is the part of a plan for nodes that read CPU_REPACK memory.
type repackPlan struct {
	inRp, routed []uint16       // per node: sources in CPU_REPACK, sources read repacked
	exec         []*core.Tensor // per node: the tensor computed (the node or its shadow)
	shadows      []repackShadow
	host         core.HostBuffer // the standard copies
}

// repackShadow is a node computed through standard copies of some sources.
type repackShadow struct {
	node   int
	orig   *core.Tensor
	shadow *core.Tensor
	srcs   []shadowSrc
}

// shadowSrc is the standard copy of source Src[j] at byte offset off of the plan's host buffer.
type shadowSrc struct {
	j          int
	orig, copy *core.Tensor
	off        int64
}

// planRepack finds the nodes of g that read CPU_REPACK memory; it returns nil when there are none.
func planRepack(nodes []*core.Tensor, ref bool) (*repackPlan, error) {
	var rp *repackPlan
	var size int64
	for i, n := range nodes {
		if n == nil || skipNode(n) {
			continue
		}
		in := repackMask(n)
		if in == 0 {
			continue
		}
		if rp == nil {
			rp = &repackPlan{inRp: make([]uint16, len(nodes)), routed: make([]uint16, len(nodes)), exec: append([]*core.Tensor(nil), nodes...)}
		}
		routed := repackRouted(n, ref)
		rp.inRp[i], rp.routed[i] = in, routed
		if in&^routed == 0 {
			continue
		}
		sh := repackShadow{node: i, orig: n, shadow: new(core.Tensor)}
		*sh.shadow = *n
		copies := map[*core.Tensor]*core.Tensor{}
		for j, s := range n.Src {
			if in&^routed&(1<<j) == 0 {
				continue
			}
			c, ok := copies[s]
			if !ok {
				c = new(core.Tensor)
				copies[s] = c
				nb, err := s.CheckedBytes()
				if err != nil {
					return nil, fmt.Errorf("tandem: cpu: node %d %v: source %v: %w", i, n, s, err)
				}
				sh.srcs = append(sh.srcs, shadowSrc{j: j, orig: s, copy: c, off: size})
				next, ok := core.CheckedAdd(size, core.AlignUp(nb, 64))
				if !ok {
					return nil, fmt.Errorf("tandem: cpu: node %d %v: standard copies of CPU_REPACK sources: %w", i, n, core.ErrOverflow)
				}
				size = next
			}
			sh.shadow.Src[j] = c
		}
		rp.exec[i] = sh.shadow
		rp.shadows = append(rp.shadows, sh)
	}
	if rp == nil {
		return nil, nil
	}
	if len(rp.shadows) > 0 {
		host, err := core.NewHostBuffer(nil, size)
		if err != nil {
			return nil, fmt.Errorf("tandem: cpu: standard copies of CPU_REPACK sources: %w", err)
		}
		rp.host = host
		if err := rp.refresh(false); err != nil {
			return nil, err
		}
	}
	return rp, nil
}

// refresh brings every shadow up to date with its node (op parameters, other sources) and, when
// load is set, fills the standard copies from the sources' buffers.
func (rp *repackPlan) refresh(load bool) error {
	data := rp.host.Bytes()
	for k := range rp.shadows {
		sh := &rp.shadows[k]
		*sh.shadow = *sh.orig
		for _, s := range sh.srcs {
			*s.copy = *s.orig
			s.copy.ViewSrc, s.copy.ViewOffs = nil, 0
			s.copy.Buffer, s.copy.Offset = rp.host, s.off
		}
		for j, src := range sh.orig.Src {
			for _, s := range sh.srcs {
				if src == s.orig {
					sh.shadow.Src[j] = s.copy
				}
			}
		}
		if !load {
			continue
		}
		for _, s := range sh.srcs {
			n := s.orig.NBytes()
			if err := core.TensorGet(s.orig, data[s.off:s.off+n], 0); err != nil {
				return fmt.Errorf("tandem: cpu: node %d %v: reading its source %v from %s: %w", sh.node, sh.orig, s.orig, RepackBufferTypeName, err)
			}
		}
	}
	return nil
}

// stillValid reports whether the nodes read CPU_REPACK memory as they did when rp was planned
// (rp nil: not at all).
func (rp *repackPlan) stillValid(nodes []*core.Tensor, ref bool) bool {
	for i, n := range nodes {
		if skipNode(n) {
			continue
		}
		in := repackMask(n)
		if rp == nil {
			if in != 0 {
				return false
			}
			continue
		}
		if in != rp.inRp[i] || (in != 0 && repackRouted(n, ref) != rp.routed[i]) {
			return false
		}
	}
	if rp != nil {
		for _, sh := range rp.shadows {
			for _, s := range sh.srcs {
				if sh.orig.Src[s.j] != s.orig {
					return false
				}
			}
		}
	}
	return true
}

// checkRepacked checks that a source the kernel reads in the repacked layout has its memory.
func checkRepacked(n, s *core.Tensor) error {
	if _, _, ok := repackedOf(s); !ok {
		return fmt.Errorf("source of %v: tensor %v has no repacked memory inside its %s buffer", n, s, RepackBufferTypeName)
	}
	return nil
}

// computeMulMatRepacked runs the repacked GEMM per (i12, i13) batch on activations already in the
// vec-dot type (yData with byte strides ynb1..3); its scratch follows the converted activations.
// Every worker of the pool calls it.
func computeMulMatRepacked(p *params, dst *core.Tensor, yData []byte, convBytes, ynb1, ynb2, ynb3 int64) {
	a, b := dst.Src[0], dst.Src[1]
	raw, l, _ := repackedOf(a)
	dd := dst.Data()
	wf := teamScratch(p, convBytes)
	r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
	sliceRp := l.sliceBytes()
	n := int(b.Ne[1])
	forEachBatch(p, dst, func(i12, i13 int64) {
		s := (i12 / r2) + (i13/r3)*a.Ne[2]
		boff := i12*ynb2 + i13*ynb3
		doff := i12*dst.Nb[2] + i13*dst.Nb[3]
		kern.GemmRepacked(l.rt, p.ith, p.nth, p.barrier, &p.pool.chunk, wf, l.m, n, l.k,
			raw[s*sliceRp:(s+1)*sliceRp], yData[boff:], int(ynb1), f32s(dd[doff:]), int(dst.Nb[1]/4))
	})
}

// loadRepackedRow converts row i1 of slice (i2, i3) of the repacked tensor a into dst[:a.Ne[0]];
// row is scratch of at least one standard row.
func loadRepackedRow(a *core.Tensor, raw []byte, l repackLayout, i1, i2, i3 int64, row []byte, dst []float32) {
	s := i2 + i3*a.Ne[2]
	sl := l.sliceBytes()
	rb := row[:l.rowBytes()]
	kern.UnpackRow(l.rt, raw[s*sl:(s+1)*sl], l.k, int(i1), rb)
	toF32(a.Type, rb, dst[:a.Ne[0]])
}

// repackRowStride is the bytes of one worker's scratch for GET_ROWS with a repacked src0: an f32
// row and a standard row of a, cache-line padded.
func repackRowStride(dst *core.Tensor) int64 {
	return (dst.Ne[0]*4 + dst.Src[0].Type.RowSize(dst.Src[0].Ne[0]) + 63) / 64 * 64
}

// getRowsRepackedWork is the scratch GET_ROWS needs with a repacked src0.
func getRowsRepackedWork(dst *core.Tensor, nTasks int) int64 {
	return repackRowStride(dst) * int64(nTasks)
}

// computeGetRowsRepacked is GET_ROWS with a repacked src0: each gathered row is unpacked and
// converted to dst's type.
func computeGetRowsRepacked(p *params, dst *core.Tensor) {
	a, b := dst.Src[0], dst.Src[1]
	raw, l, _ := repackedOf(a)
	db, dd := b.Data(), dst.Data()
	ne0 := dst.Ne[0]
	stride := repackRowStride(dst)
	w := p.work[int64(p.ith)*stride : int64(p.ith+1)*stride]
	buf := f32s(w[:ne0*4])[:ne0]
	row := w[ne0*4:]
	if p.ith == 0 {
		for ir := int64(0); ir < dst.NRows(); ir++ {
			i10, i11, i12 := unravel(ir, dst.Ne)
			if r := eltIndex(b, db, i10, i11, i12); r < 0 || r >= a.Ne[1] {
				p.fail(fmt.Errorf("GET_ROWS: index %d at [%d,%d,%d] of %v is out of range: %v has %d rows",
					r, i10, i11, i12, b, a, a.Ne[1]))
				return
			}
		}
	}
	dstDirect := dst.Type == core.TypeF32 && dst.Nb[0] == 4
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i10, i11, i12 := unravel(ir, dst.Ne)
		r := eltIndex(b, db, i10, i11, i12)
		if r < 0 || r >= a.Ne[1] {
			return // worker 0 reports it
		}
		if dstDirect {
			doff := eltRowOff(dst, i10, i11, i12)
			loadRepackedRow(a, raw, l, r, i11, i12, row, f32s(dd[doff:])[:ne0])
			continue
		}
		loadRepackedRow(a, raw, l, r, i11, i12, row, buf)
		storeRow(dst, dd, i10, i11, i12, buf)
	}
}
