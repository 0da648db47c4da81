package cpu

import (
	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
)

func init() {
	for _, op := range []core.Op{core.OpAdd, core.OpSub, core.OpMul, core.OpDiv} {
		register(op, opImpl{compute: computeBinary, work: binaryWork})
	}
}

// binaryWork: two f32 rows per worker when a row needs conversion or gathering.
func binaryWork(dst *core.Tensor, nTasks int) int64 {
	return scratchBytes(2*dst.Ne[0], nTasks)
}

func binaryFunc(op core.Op) func(x, y float32) float32 {
	switch op {
	case core.OpAdd:
		return func(x, y float32) float32 { return x + y }
	case core.OpSub:
		return func(x, y float32) float32 { return x - y }
	case core.OpMul:
		return func(x, y float32) float32 { return x * y }
	}
	return func(x, y float32) float32 { return x / y }
}

// computeBinary: dst = src0 op broadcast(src1), row by row. Rows of dst are split among workers;
// dst may alias src0 (in-place), which row-at-a-time processing tolerates.
func computeBinary(p *params, dst *core.Tensor) {
	a, b := dst.Src[0], dst.Src[1]
	da, db, dd := a.Data(), b.Data(), dst.Data()
	ne0 := dst.Ne[0]
	buf := scratch(p, 2*ne0)
	xa, xb := buf[:ne0], buf[ne0:2*ne0]
	fast := a.Type == core.TypeF32 && b.Type == core.TypeF32 && dst.Type == core.TypeF32 &&
		a.Nb[0] == 4 && b.Nb[0] == 4 && dst.Nb[0] == 4
	op := dst.Op
	f := binaryFunc(op)
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		j1, j2, j3 := i1%b.Ne[1], i2%b.Ne[2], i3%b.Ne[3]
		if fast {
			ra := f32s(da[i1*a.Nb[1]+i2*a.Nb[2]+i3*a.Nb[3]:])[:ne0]
			rb := f32s(db[j1*b.Nb[1]+j2*b.Nb[2]+j3*b.Nb[3]:])[:b.Ne[0]]
			rd := f32s(dd[i1*dst.Nb[1]+i2*dst.Nb[2]+i3*dst.Nb[3]:])[:ne0]
			if p.ref {
				binaryRowF32(op, rd, ra, rb)
			} else {
				binaryRowF32Fast(op, rd, ra, rb)
			}
			continue
		}
		loadRow(a, da, i1, i2, i3, xa)
		loadRow(b, db, j1, j2, j3, xb)
		nb0 := b.Ne[0]
		for i := int64(0); i < ne0; i++ {
			xa[i] = f(xa[i], xb[i%nb0])
		}
		storeRow(dst, dd, i1, i2, i3, xa)
	}
}

// binaryRowF32 applies op to contiguous f32 rows, repeating b along the row.
func binaryRowF32(op core.Op, d, a, b []float32) {
	nb := len(b)
	if nb == 1 {
		binaryScalarF32(op, d, a, b[0])
		return
	}
	for off := 0; off < len(d); off += nb {
		dd, aa := d[off:off+nb], a[off:off+nb]
		switch op {
		case core.OpAdd:
			for i := range dd {
				dd[i] = aa[i] + b[i]
			}
		case core.OpSub:
			for i := range dd {
				dd[i] = aa[i] - b[i]
			}
		case core.OpMul:
			for i := range dd {
				dd[i] = aa[i] * b[i]
			}
		default:
			for i := range dd {
				dd[i] = aa[i] / b[i]
			}
		}
	}
}

// binaryScalarF32 is binaryRowF32 for a b of one element (a scale per row, as a mixture of
// experts weighs its experts' outputs): one loop over the row instead of one per element.
func binaryScalarF32(op core.Op, d, a []float32, s float32) {
	a = a[:len(d)]
	switch op {
	case core.OpAdd:
		for i := range d {
			d[i] = a[i] + s
		}
	case core.OpSub:
		for i := range d {
			d[i] = a[i] - s
		}
	case core.OpMul:
		for i := range d {
			d[i] = a[i] * s
		}
	default:
		for i := range d {
			d[i] = a[i] / s
		}
	}
}

// binaryRowF32Fast is binaryRowF32 with the SIMD add and mul kernels for ADD and MUL (MUL by
// one element scales the row).
func binaryRowF32Fast(op core.Op, d, a, b []float32) {
	nb := len(b)
	if op == core.OpMul && nb == 1 {
		// b[0] is read first: d may be b (rows of one element, the result written over b). In
		// place (d is a) the row is scaled as it is.
		s := b[0]
		if len(d) > 0 && &d[0] != &a[0] {
			copy(d, a)
		}
		kern.ScaleF32(s, d)
		return
	}
	if op != core.OpAdd && op != core.OpMul || nb == 1 {
		binaryRowF32(op, d, a, b)
		return
	}
	for off := 0; off < len(d); off += nb {
		if op == core.OpAdd {
			kern.AddF32(d[off:off+nb], a[off:off+nb], b)
		} else {
			kern.MulF32(d[off:off+nb], a[off:off+nb], b)
		}
	}
}
