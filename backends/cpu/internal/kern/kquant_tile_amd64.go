//go:build amd64 && !purego

package kern

import "github.com/klauspost/cpuid/v2"

// The AVX-512 VNNI tile kernels of kquant_tile_amd64.s (unchecked: kTileSpec.tile checks the
// lengths first).

//go:noescape
func q4kTile1VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func q4kTile4VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func q6kTile1VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func q6kTile4VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func q5kTile1VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func q5kTile4VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func iq4xsTile1VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func iq4xsTile4VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

// The IQ4 kernels need AVX512_VBMI (byte permutes), IQ4_XS also BMI2 (PDEP); the IQ4_NL ones
// count nb in groups of eight blocks (kTileSpec.group).
//
//go:noescape
func iq4nlTile1VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func iq4nlTile4VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

// iq4nlPrepVNNI stages a Q8_0 row for iq4nlTile1VNNI (kTileSpec.stage = 320 bytes per step
// of eight blocks: quants + 128, dy).
//
//go:noescape
func iq4nlPrepVNNI(nb int, y *byte, buf *byte)

// The 256-bit tile kernels of kquant_tile256_amd64.s: AVX2 (VPMADDUBSW + VPMADDWD) and
// AVX-VNNI (VPMADDUBSW + VEX VPDPWSSD), Y0-Y15 only.

//go:noescape
func q4kTile1AVX2(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func q4kTile4AVX2(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func q4kTile1AVXVNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func q4kTile4AVXVNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func q6kTile1AVX2(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func q6kTile4AVX2(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func q6kTile1AVXVNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func q6kTile4AVXVNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func q5kTile1AVX2(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func q5kTile4AVX2(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func q5kTile1AVXVNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func q5kTile4AVXVNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func iq4xsTile1AVX2(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func iq4xsTile4AVX2(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func iq4xsTile1AVXVNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func iq4xsTile4AVXVNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func iq4nlTile1AVX2(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

//go:noescape
func iq4nlTile4AVX2(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

type kTileKernel = func(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

// kTileAsm holds a spec's assembly kernels per kernel set, each [1 activation row, 4 rows], and
// the staging function of its 512-bit 1-row kernel (nil where it reads the rows as they are).
type kTileAsm struct {
	vnni512, vnni256, avx2 [2]kTileKernel
	prep512                kTilePrep
}

func init() {
	q4kTile.asm = kTileAsm{
		vnni512: [2]kTileKernel{q4kTile1VNNI, q4kTile4VNNI},
		vnni256: [2]kTileKernel{q4kTile1AVXVNNI, q4kTile4AVXVNNI},
		avx2:    [2]kTileKernel{q4kTile1AVX2, q4kTile4AVX2},
	}
	q5kTile.asm = kTileAsm{
		vnni512: [2]kTileKernel{q5kTile1VNNI, q5kTile4VNNI},
		vnni256: [2]kTileKernel{q5kTile1AVXVNNI, q5kTile4AVXVNNI},
		avx2:    [2]kTileKernel{q5kTile1AVX2, q5kTile4AVX2},
	}
	q6kTile.asm = kTileAsm{
		vnni512: [2]kTileKernel{q6kTile1VNNI, q6kTile4VNNI},
		vnni256: [2]kTileKernel{q6kTile1AVXVNNI, q6kTile4AVXVNNI},
		avx2:    [2]kTileKernel{q6kTile1AVX2, q6kTile4AVX2},
	}
	// IQ4_XS needs BMI2 (kernels); IQ4_NL has only the AVX2 form at 256 bits (the same op count).
	iq4xsTile.asm = kTileAsm{
		vnni512: [2]kTileKernel{iq4xsTile1VNNI, iq4xsTile4VNNI},
		vnni256: [2]kTileKernel{iq4xsTile1AVXVNNI, iq4xsTile4AVXVNNI},
		avx2:    [2]kTileKernel{iq4xsTile1AVX2, iq4xsTile4AVX2},
	}
	iq4nlTile.asm = kTileAsm{
		vnni512: [2]kTileKernel{iq4nlTile1VNNI, iq4nlTile4VNNI},
		vnni256: [2]kTileKernel{iq4nlTile1AVX2, iq4nlTile4AVX2},
		avx2:    [2]kTileKernel{iq4nlTile1AVX2, iq4nlTile4AVX2},
		prep512: iq4nlPrepVNNI,
	}
}

// hasBMI2: the IQ4_XS kernels spread the scale nibbles with PDEP.
var hasBMI2 = cpuid.CPU.Supports(cpuid.BMI2)

// kernels returns the active kernel set's tile kernels for s (nil where it has none: the
// driver then runs the row dots): the AVX-512 VNNI ones, else the 256-bit AVX-VNNI, else the
// AVX2 ones. prep is the staging function the 1-row kernel needs (nil where it reads the rows
// as they are).
func (s *kTileSpec) kernels() (k1, k4 kTileKernel, prep kTilePrep) {
	if !useASM {
		return nil, nil, nil
	}
	if useVNNI && ((s != iq4xsTile && s != iq4nlTile) || hasVBMI) && (s != iq4xsTile || hasBMI2) {
		return s.asm.vnni512[0], s.asm.vnni512[1], s.asm.prep512
	}
	if s == iq4xsTile && !hasBMI2 {
		return nil, nil, nil
	}
	if useAVXVNNI {
		return s.asm.vnni256[0], s.asm.vnni256[1], nil
	}
	return s.asm.avx2[0], s.asm.avx2[1], nil
}
