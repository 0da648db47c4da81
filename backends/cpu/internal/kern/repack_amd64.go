//go:build amd64 && !purego

package kern

// Repacked micro-kernels in assembly (repack512_amd64.s): nb superblocks of one weight group
// (w) against a prepared activation tile (p, 8 rows or 1); c[j*ldc+r] for j < rows, r < 16
// (rows' outputs, loaded first when accum != 0). Lengths are checked by rpTile.

//go:noescape
func rpGemm8Q40VNNI(nb int, w, p *byte, c *float32, ldc, accum int)

//go:noescape
func rpGemm8Q41VNNI(nb int, w, p *byte, c *float32, ldc, accum int)

//go:noescape
func rpGemm8Q80VNNI(nb int, w, p *byte, c *float32, ldc, accum int)

//go:noescape
func rpGemm4x2Q40VNNI(nb int, w *byte, gs int, pq, pd *byte, c *float32, ldc, accum int)

//go:noescape
func rpGemm4x2Q80VNNI(nb int, w *byte, gs int, pq, pd *byte, c *float32, ldc, accum int)

//go:noescape
func prepRecAVX2(nb int, y, p *byte, mul, doff, coff, stride int)

//go:noescape
func rpGemv1Q40VNNI(nb int, w, p *byte, c *float32, ldc, accum int)

//go:noescape
func rpGemv1Q41VNNI(nb int, w, p *byte, c *float32, ldc, accum int)

//go:noescape
func rpGemv1Q80VNNI(nb int, w, p *byte, c *float32, ldc, accum int)

//go:noescape
func rpK256Q40R4VNNI(nb int, wq, ws, pq, pd *byte, super, rs, co int, c *float32, ldc, accum int)

//go:noescape
func rpK256Q40R1VNNI(nb int, wq, ws, pq, pd *byte, super, rs, co int, c *float32, ldc, accum int)

//go:noescape
func rpK256Q41R4VNNI(nb int, wq, ws, pq, pd *byte, super, rs, co int, c *float32, ldc, accum int)

//go:noescape
func rpK256Q41R1VNNI(nb int, wq, ws, pq, pd *byte, super, rs, co int, c *float32, ldc, accum int)

//go:noescape
func rpK256Q80R4VNNI(nb int, wq, ws, pq, pd *byte, super, rs, co int, c *float32, ldc, accum int)

//go:noescape
func rpK256Q80R1VNNI(nb int, wq, ws, pq, pd *byte, super, rs, co int, c *float32, ldc, accum int)

//go:noescape
func rpK256Q40R4AVX2(nb int, wq, ws, pq, pd *byte, super, rs, co int, c *float32, ldc, accum int)

//go:noescape
func rpK256Q40R1x2AVX2(nb int, wq, ws, pq, pd *byte, super, rs, co int, c *float32, ldc, accum int)

//go:noescape
func rpK256Q40R1AVX2(nb int, wq, ws, pq, pd *byte, super, rs, co int, c *float32, ldc, accum int)

//go:noescape
func rpK256Q41R4AVX2(nb int, wq, ws, pq, pd *byte, super, rs, co int, c *float32, ldc, accum int)

//go:noescape
func rpK256Q41R1x2AVX2(nb int, wq, ws, pq, pd *byte, super, rs, co int, c *float32, ldc, accum int)

//go:noescape
func rpK256Q41R1AVX2(nb int, wq, ws, pq, pd *byte, super, rs, co int, c *float32, ldc, accum int)

//go:noescape
func rpK256Q80R4AVX2(nb int, wq, ws, pq, pd *byte, super, rs, co int, c *float32, ldc, accum int)

//go:noescape
func rpK256Q80R1x2AVX2(nb int, wq, ws, pq, pd *byte, super, rs, co int, c *float32, ldc, accum int)

//go:noescape
func rpK256Q80R1AVX2(nb int, wq, ws, pq, pd *byte, super, rs, co int, c *float32, ldc, accum int)

type rpKernel func(nb int, w, p *byte, c *float32, ldc, accum int)

// rpKernels512 are the AVX-512 VNNI kernels by repack type: [rt][0] 8 rows, [rt][1] 1 row.
var rpKernels512 = [...][2]rpKernel{
	RepackQ4_0: {rpGemm8Q40VNNI, rpGemv1Q40VNNI},
	RepackQ4_1: {rpGemm8Q41VNNI, rpGemv1Q41VNNI},
	RepackQ8_0: {rpGemm8Q80VNNI, rpGemv1Q80VNNI},
}

type rpKernelX2 func(nb int, w *byte, gs int, pq, pd *byte, c *float32, ldc, accum int)

// rpKernels512x2 are the AVX-512 VNNI kernels of two weight groups times 4 of a tile's 8
// activation rows (repack512x2_amd64.s), by repack type; nil where there is none (Q4_1).
var rpKernels512x2 = [...]rpKernelX2{
	RepackQ4_0: rpGemm4x2Q40VNNI,
	RepackQ8_0: rpGemm4x2Q80VNNI,
}

// rpTile2 is rpTile (nr = rpNR) on two full groups at once: w holds group g's nb superblocks at 0
// and group g+1's at gs, c takes both groups' 32 outputs per activation row. It reports false,
// computing nothing, where the kernel set has no two-group kernel for rt; where it has, C is bit
// for bit what two rpTile calls give.
func rpTile2(rt RepackType, nb int, w []byte, gs int, p []byte, c []float32, ldc int, accum bool) bool {
	if !useVNNI || int(rt) >= len(rpKernels512x2) || rpKernels512x2[rt] == nil {
		return false
	}
	k := rpKernels512x2[rt]
	// Bounds checks standing in for the assembly's unchecked accesses.
	f := rt.tileFormat()
	_ = w[gs+nb*f.super-1]
	_ = p[nb*rpNR*rpRec-1]
	_ = c[(rpNR-1)*ldc+2*RepackRows-1]
	acc := 0
	if accum {
		acc = 1
	}
	const dOff = rpNR * QK // the records' f32 scales
	k(nb, &w[0], gs, &p[0], &p[dOff], &c[0], ldc, acc)
	k(nb, &w[0], gs, &p[4*QK], &p[dOff+16], &c[4*ldc], ldc, acc)
	return true
}

type rpKernel256 func(nb int, wq, ws, pq, pd *byte, super, rs, co int, c *float32, ldc, accum int)

// rpKernels256 are the 256-bit kernels by repack type: [rt][0] 4 rows, [rt][1] 1 row; AVX-VNNI
// (rpKernelsVNNI256) and AVX2 (rpKernelsAVX2).
var (
	rpKernelsVNNI256 = [...][2]rpKernel256{
		RepackQ4_0: {rpK256Q40R4VNNI, rpK256Q40R1VNNI},
		RepackQ4_1: {rpK256Q41R4VNNI, rpK256Q41R1VNNI},
		RepackQ8_0: {rpK256Q80R4VNNI, rpK256Q80R1VNNI},
	}
	rpKernelsAVX2 = [...][2]rpKernel256{
		RepackQ4_0: {rpK256Q40R4AVX2, rpK256Q40R1AVX2},
		RepackQ4_1: {rpK256Q41R4AVX2, rpK256Q41R1AVX2},
		RepackQ8_0: {rpK256Q80R4AVX2, rpK256Q80R1AVX2},
	}
	// rpKernelsAVX2x2 are the AVX2 one-row kernels over both halves of a group in one sweep.
	rpKernelsAVX2x2 = [...]rpKernel256{
		RepackQ4_0: rpK256Q40R1x2AVX2,
		RepackQ4_1: rpK256Q41R1x2AVX2,
		RepackQ8_0: rpK256Q80R1x2AVX2,
	}
)

// rpTile256 runs a 256-bit kernel set on a (group, tile) pair: two halves of 8 weight rows
// times ceil(rows/4) calls of 4 activation rows (or one call of 1).
func rpTile256(ks *[4][2]rpKernel256, rt RepackType, nr, rows, nb int, w, p []byte, c []float32, ldc, acc int) {
	f := rt.tileFormat()
	rs := nr * rpRec
	step, ki := 4, 0
	if nr == 1 {
		step, ki = 1, 1
	}
	if nr == 1 && ks == &rpKernelsAVX2 {
		// both halves in one sweep: the weights are read once (decode is bound by them)
		if k := rpKernelsAVX2x2[rt]; k != nil {
			k(nb, &w[f.hdr], &w[0], &p[0], &p[QK], f.super, rs, 4, &c[0], ldc, acc)
			return
		}
	}
	k := ks[rt][ki]
	for h := 0; h < 2; h++ {
		for j := 0; j < rows; j += step {
			k(nb, &w[f.hdr+32*h], &w[16*h], &p[QK*j], &p[nr*QK+4*j], f.super, rs, 4*nr, &c[j*ldc+8*h], ldc, acc)
		}
	}
}

// rpTile runs the repacked micro-kernel of the active kernel set on nr activation rows of the
// prepared tile p and the 16 weight rows of w (nb blocks each): c[j*ldc+r] (+)= the dots.
func rpTile(rt RepackType, nr, nb int, w, p []byte, c []float32, ldc int, accum bool) {
	rpTilePart(rt, nr, nr, nb, w, p, c, ldc, accum)
}

// rpTilePart is rpTile that needs only the first rows (≤ nr) activation rows of the tile: the
// 256-bit kernels skip the calls of 4-row blocks past them (a prompt of two or three tokens
// would otherwise cost as much as one of eight); rows of c past them are left undefined.
func rpTilePart(rt RepackType, nr, rows, nb int, w, p []byte, c []float32, ldc int, accum bool) {
	var k rpKernel
	if useVNNI {
		if nr == 1 {
			k = rpKernels512[rt][1]
		} else {
			k = rpKernels512[rt][0]
		}
	}
	if k == nil && !useASM {
		rpTileGo(rt, nr, rows, nb, w, p, c, ldc, accum)
		return
	}
	// Bounds checks standing in for the assembly's unchecked accesses.
	f := rt.tileFormat()
	_ = w[nb*f.super-1]
	_ = p[nb*nr*rpRec-1]
	_ = c[(nr-1)*ldc+RepackRows-1]
	acc := 0
	if accum {
		acc = 1
	}
	switch {
	case k != nil:
		k(nb, &w[0], &p[0], &c[0], ldc, acc)
	case useAVXVNNI:
		rpTile256(&rpKernelsVNNI256, rt, nr, rows, nb, w, p, c, ldc, acc)
	default:
		rpTile256(&rpKernelsAVX2, rt, nr, rows, nb, w, p, c, ldc, acc)
	}
}

// hasRepackASM reports whether rpTile runs assembly (any set from avx2 up).
func hasRepackASM() bool { return useASM }

//go:noescape
func repackStdQ40AVX2(nb int, dst, src *byte, lda int)

//go:noescape
func repackStdQ41AVX2(nb int, dst, src *byte, lda int)

//go:noescape
func repackStdQ80AVX2(nb int, dst, src *byte, lda int)

// repackGroupFast converts blocks kb..kb+kn-1 of 16 full standard rows (a[r*lda:]) into kn
// repacked superblocks (dst) in assembly; it reports false (nothing done) where this set has none.
func repackGroupFast(f repackFormat, dst, a []byte, lda, kb, kn int) bool {
	if !useASM || kn == 0 {
		return false
	}
	// Bounds checks standing in for the assembly's unchecked loads and stores.
	_ = dst[kn*f.super-1]
	_ = a[15*lda+(kb+kn)*f.block-1]
	src := &a[kb*f.block]
	switch f.super {
	case 288:
		repackStdQ40AVX2(kn, &dst[0], src, lda)
	case 320:
		repackStdQ41AVX2(kn, &dst[0], src, lda)
	default:
		repackStdQ80AVX2(kn, &dst[0], src, lda)
	}
	return true
}

// prepRec writes activation row r's slots of nb prepared records of nr rows (prepRepackRow)
// from Q8_0 blocks, for Q4_0 and Q8_0 weights, with the AVX2 kernel where the set has it, and
// reports whether it did.
func prepRec(rt RepackType, nb, nr, r int, y, p []byte) bool {
	if !useASM || nb == 0 || rt != RepackQ4_0 && rt != RepackQ8_0 {
		return false
	}
	mul := -8
	if rt == RepackQ8_0 {
		mul = -128
	}
	rec := nr * rpRec
	// Bounds checks standing in for the assembly's unchecked accesses: row r's last slot (its
	// correction) is the last byte written of each record.
	_ = y[nb*BlockQ8_0Size-1]
	_ = p[(nb-1)*rec+nr*(QK+4)+4*r+3]
	q := r * QK
	prepRecAVX2(nb, &y[0], &p[q], mul, nr*QK+4*r-q, nr*(QK+4)+4*r-q, rec)
	return true
}
