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

// iq4nlPrepVNNI stages a Q8_0 row for iq4nlTile1VNNI (kTileSpec.stage = 576 bytes per step
// of eight blocks: quants, −128·Σ q8 per dword, dy).
//
//go:noescape
func iq4nlPrepVNNI(nb int, y *byte, buf *byte)

type kTileKernel = func(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

// kTileKernels512 are the AVX-512 VNNI kernels by spec: [1 activation row, 4 rows].
var kTileKernels512 = map[*kTileSpec][2]kTileKernel{
	q4kTile:   {q4kTile1VNNI, q4kTile4VNNI},
	q5kTile:   {q5kTile1VNNI, q5kTile4VNNI},
	q6kTile:   {q6kTile1VNNI, q6kTile4VNNI},
	iq4xsTile: {iq4xsTile1VNNI, iq4xsTile4VNNI},
	iq4nlTile: {iq4nlTile1VNNI, iq4nlTile4VNNI},
}

// hasBMI2: the IQ4_XS kernels spread the scale nibbles with PDEP.
var hasBMI2 = cpuid.CPU.Supports(cpuid.BMI2)

// kernels returns the active kernel set's tile kernels for s (nil where it has none: the
// driver then runs the row dots).
// prep is the staging function the 1-row kernel needs (nil where it reads the rows as they
// are).
func (s *kTileSpec) kernels() (k1, k4 kTileKernel, prep kTilePrep) {
	if !useASM || !useVNNI {
		return nil, nil, nil
	}
	if (s == iq4xsTile || s == iq4nlTile) && !hasVBMI || s == iq4xsTile && !hasBMI2 {
		return nil, nil, nil
	}
	ks := kTileKernels512[s]
	if s == iq4nlTile {
		prep = iq4nlPrepVNNI
	}
	return ks[0], ks[1], prep
}
