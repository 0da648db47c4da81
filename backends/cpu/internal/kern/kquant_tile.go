package kern

import (
	"sync"
	"unsafe"
)

// Tiles of K-quant and IQ4 dot products: one call computes the dots of m weight rows against
// n activation rows, so that the kernels (kquant_tile_amd64.s and kquant_tile_iq4_amd64.s for
// the AVX-512 VNNI set, kquant_tile256_amd64.s for the AVX2 and AVX-VNNI sets) unpack a
// weight super-block once for several activation rows and keep the whole row loop in
// assembly. The mat-vec (n == 1) is then a stream of weight bytes; the tile (n > 1) reuses
// each unpacked super-block for four activation rows with the activations blocked over k so
// that they stay in L1.

// KTile is a tiled dot of one weight type: c[j*ldc+i] = dot(x[i*ldx:], y[j*ldy:]) over k
// elements for i < m, j < n (the rows are k/256 super-blocks of the weight type and Q8_K, or
// k/32 blocks of IQ4_NL and Q8_0). The results equal the type's row dot (DotQ4_KQ8_K …) up
// to float32 rounding: the exact integer sums of each sub-block are scaled in float lanes and
// summed in a different order.
type KTile func(k int, x []byte, ldx, m int, y []byte, ldy, n int, c []float32, ldc int)

// kTileKC is the kernel steps of k (blocks; groups of eight blocks for IQ4_NL) per 4-row
// tile-kernel call: four activation rows of 16 Q8_K blocks (18.7 KB) stay in L1 while the
// weight rows stream past them. The IQ4_NL 4-row kernel's frame holds the scales of 16 steps.
const kTileKC = 16

// kTileSpec describes a weight type for the tile driver.
type kTileSpec struct {
	op     string
	qk     int // elements per weight block
	xb, yb int // bytes per weight block, per activation block
	// group is the weight blocks per kernel step (the kernels' nb counts groups; blocks past
	// the last whole group get row dots); 0 means 1.
	group int
	// stage is the bytes per kernel step of an activation row as a prep function stages it
	// for the 1-row kernel (where the kernel set has one; see kernels).
	stage int
	dot   func(n int, x, y []byte) float32
	asm   kTileAsm // the assembly kernels per kernel set (kernels picks one)
}

// kTilePrep stages nb kernel steps of the activation row at y into buf (kTileSpec.stage
// bytes per step, buf 64-byte aligned) for a 1-row kernel, which then gets buf as its y.
type kTilePrep = func(nb int, y *byte, buf *byte)

// stagePool holds the buffers of staged activation rows.
var stagePool sync.Pool

// getStage returns a 64-byte aligned buffer of n bytes and the pool entry to put back.
func getStage(n int) ([]byte, *[]byte) {
	p, _ := stagePool.Get().(*[]byte)
	if p == nil || cap(*p) < n+64 {
		b := make([]byte, n+64)
		p = &b
	}
	b := (*p)[:n+64]
	off := int(-uintptr(unsafe.Pointer(&b[0])) & 63) // only the address's alignment is read
	return b[off : off+n], p
}

func (s *kTileSpec) tile(k int, x []byte, ldx, m int, y []byte, ldy, n int, c []float32, ldc int) {
	if m <= 0 || n <= 0 {
		return
	}
	nb := kCheck(s.op, k, s.qk, s.xb, len(x)-(m-1)*ldx, s.yb, len(y)-(n-1)*ldy)
	switch {
	case ldx < nb*s.xb || ldy < nb*s.yb || ldc < m:
		panic("kern." + s.op + ": leading dimension too small")
	case len(c) < (n-1)*ldc+m:
		panic("kern." + s.op + ": c too short")
	}
	k1, k4, prep := s.kernels()
	g := max(s.group, 1)
	ng := nb / g
	if ng == 0 || k1 == nil {
		for j := range n {
			for i := range m {
				c[j*ldc+i] = s.dot(k, x[i*ldx:], y[j*ldy:])
			}
		}
		return
	}
	xg, yg := g*s.xb, g*s.yb
	// The rows the 1-row kernel computes: all when there are fewer than four (or no 4-row
	// kernel), else the last n%4. With a prep function they are staged once, over all of k.
	j1 := 0
	if n >= 4 && k4 != nil {
		j1 = n - n%4
	}
	var staged []byte
	if prep != nil && j1 < n {
		var p *[]byte
		staged, p = getStage((n - j1) * ng * s.stage)
		defer stagePool.Put(p)
		for j := j1; j < n; j++ {
			prep(ng, &y[j*ldy], &staged[(j-j1)*ng*s.stage])
		}
	}
	// row1 runs the 1-row kernel on activation row j, steps kb to kb+kn.
	row1 := func(j, kb, kn, acc int) {
		if staged != nil {
			k1(kn, &x[kb*xg], ldx, m, &staged[((j-j1)*ng+kb)*s.stage], 0, &c[j*ldc], ldc, acc)
			return
		}
		k1(kn, &x[kb*xg], ldx, m, &y[j*ldy+kb*yg], ldy, &c[j*ldc], ldc, acc)
	}
	// Fewer than four activation rows (the mat-vec): each over the whole of k, the weight rows
	// streamed once. Otherwise every activation row, whichever kernel (4 rows or 1) computes
	// it, gets the same k-blocked sequence of float operations: results depend on how callers
	// cut n only through whether a call has fewer than four rows.
	if n < 4 {
		for j := range n {
			row1(j, 0, ng, 0)
		}
	} else {
		for kb := 0; kb < ng; kb += kTileKC {
			kn := min(kTileKC, ng-kb)
			acc := 0
			if kb > 0 {
				acc = 1
			}
			for j := 0; j < j1; j += 4 {
				k4(kn, &x[kb*xg], ldx, m, &y[j*ldy+kb*yg], ldy, &c[j*ldc], ldc, acc)
			}
			for j := j1; j < n; j++ {
				row1(j, kb, kn, acc)
			}
		}
	}
	if tail := nb - ng*g; tail > 0 {
		xo, yo := ng*xg, ng*yg
		for j := range n {
			for i := range m {
				c[j*ldc+i] += s.dot(tail*s.qk, x[i*ldx+xo:], y[j*ldy+yo:])
			}
		}
	}
}

var (
	q4kTile   = &kTileSpec{op: "TileQ4_KQ8_K", qk: qkK, xb: blockQ4_K, yb: blockQ8_K, dot: DotQ4_KQ8_K}
	q5kTile   = &kTileSpec{op: "TileQ5_KQ8_K", qk: qkK, xb: blockQ5_K, yb: blockQ8_K, dot: DotQ5_KQ8_K}
	q6kTile   = &kTileSpec{op: "TileQ6_KQ8_K", qk: qkK, xb: blockQ6_K, yb: blockQ8_K, dot: DotQ6_KQ8_K}
	iq4xsTile = &kTileSpec{op: "TileIQ4_XSQ8_K", qk: qkK, xb: blockIQ4XS, yb: blockQ8_K, dot: DotIQ4_XSQ8_K}
	iq4nlTile = &kTileSpec{op: "TileIQ4_NLQ8_0", qk: QK, xb: blockIQ4NL, yb: BlockQ8_0Size, group: 8, stage: 320, dot: DotIQ4_NLQ8_0}
)

// TileQ4_KQ8_K is the KTile of Q4_K weights and Q8_K activations.
func TileQ4_KQ8_K(k int, x []byte, ldx, m int, y []byte, ldy, n int, c []float32, ldc int) {
	q4kTile.tile(k, x, ldx, m, y, ldy, n, c, ldc)
}

// TileQ5_KQ8_K is the KTile of Q5_K weights and Q8_K activations.
func TileQ5_KQ8_K(k int, x []byte, ldx, m int, y []byte, ldy, n int, c []float32, ldc int) {
	q5kTile.tile(k, x, ldx, m, y, ldy, n, c, ldc)
}

// TileQ6_KQ8_K is the KTile of Q6_K weights and Q8_K activations.
func TileQ6_KQ8_K(k int, x []byte, ldx, m int, y []byte, ldy, n int, c []float32, ldc int) {
	q6kTile.tile(k, x, ldx, m, y, ldy, n, c, ldc)
}

// TileIQ4_XSQ8_K is the KTile of IQ4_XS weights and Q8_K activations.
func TileIQ4_XSQ8_K(k int, x []byte, ldx, m int, y []byte, ldy, n int, c []float32, ldc int) {
	iq4xsTile.tile(k, x, ldx, m, y, ldy, n, c, ldc)
}

// TileIQ4_NLQ8_0 is the KTile of IQ4_NL weights and Q8_0 activations.
func TileIQ4_NLQ8_0(k int, x []byte, ldx, m int, y []byte, ldy, n int, c []float32, ldc int) {
	iq4nlTile.tile(k, x, ldx, m, y, ldy, n, c, ldc)
}
