package tests

import (
	"math/rand/v2"

	"github.com/tandem-ml/tandem/core"
)

// rawScale writes a block's f16 scale bits d for the quantized types that store it elsewhere
// than in the block's first two bytes (the layout of the IQ2, IQ3 and IQ1_S blocks).
var rawScale = map[core.Type]func(blk []byte, d uint16){
	// IQ1_M spreads its f16 scale over the top nibbles of the four u16 scale words at bytes
	// 48 … 55 (word k holds bits 4k … 4k+3).
	core.TypeIQ1_M: func(blk []byte, d uint16) {
		for k := range 4 {
			blk[48+2*k+1] = blk[48+2*k+1]&0x0f | uint8(d>>(4*k)&0xf)<<4
		}
	},
}

// randomBlocks fills t, of a quantized type that has no quantizer (ggml's IQ2, IQ3 and IQ1 types:
// they can be read, never written from floats), with valid random blocks: random bytes for the
// grid indices, signs and sub-block scales (every pattern of those fields decodes) and a finite
// f16 block scale in ±[2^-5, 2^-4), so the values stay moderate (|x| ≤ 11 for the IQ2 types).
func randomBlocks(t *core.Tensor, r *rand.Rand) error {
	raw := make([]byte, t.NBytes())
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	size := int(t.Type.Size())
	put := rawScale[t.Type]
	for off := 0; off+size <= len(raw); off += size {
		d := uint16(r.Uint32()&0x8000) | 10<<10 | uint16(r.IntN(1024))
		if put != nil {
			put(raw[off:off+size], d)
		} else {
			raw[off], raw[off+1] = byte(d), byte(d>>8)
		}
	}
	return core.TensorSet(t, raw, 0)
}
