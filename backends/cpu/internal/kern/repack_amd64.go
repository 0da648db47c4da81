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
func rpGemv1Q40VNNI(nb int, w, p *byte, c *float32, ldc, accum int)

//go:noescape
func rpGemv1Q41VNNI(nb int, w, p *byte, c *float32, ldc, accum int)

//go:noescape
func rpGemv1Q80VNNI(nb int, w, p *byte, c *float32, ldc, accum int)

type rpKernel func(nb int, w, p *byte, c *float32, ldc, accum int)

// rpKernels512 are the AVX-512 VNNI kernels by repack type: [rt][0] 8 rows, [rt][1] 1 row.
var rpKernels512 = [...][2]rpKernel{
	RepackQ4_0: {rpGemm8Q40VNNI, rpGemv1Q40VNNI},
	RepackQ4_1: {rpGemm8Q41VNNI, rpGemv1Q41VNNI},
	RepackQ8_0: {rpGemm8Q80VNNI, rpGemv1Q80VNNI},
}

// rpTile runs the repacked micro-kernel of the active kernel set on nr activation rows of the
// prepared tile p and the 16 weight rows of w (nb blocks each): c[j*ldc+r] (+)= the dots.
func rpTile(rt RepackType, nr, nb int, w, p []byte, c []float32, ldc int, accum bool) {
	var k rpKernel
	if useVNNI {
		if nr == 1 {
			k = rpKernels512[rt][1]
		} else {
			k = rpKernels512[rt][0]
		}
	}
	if k == nil {
		rpTileGo(rt, nr, nb, w, p, c, ldc, accum)
		return
	}
	// Bounds checks standing in for the assembly's unchecked accesses.
	f := rt.format("rpTile")
	_ = w[nb*f.super-1]
	_ = p[nb*nr*rpRec-1]
	_ = c[(nr-1)*ldc+RepackRows-1]
	acc := 0
	if accum {
		acc = 1
	}
	k(nb, &w[0], &p[0], &c[0], ldc, acc)
}
