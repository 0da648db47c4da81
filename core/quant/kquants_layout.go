package quant

// Block sizes (elements per block) and block byte sizes of ggml's Q5, K-quant and IQ4 formats,
// bit-compatible with ggml-common.h (packed structs, little-endian fields).
const (
	// QK5_0 is the number of elements in a Q5_0 block.
	QK5_0 = 32
	// BlockQ5_0Size is the byte size of block_q5_0: f16 d, uint32 qh (bit 4 of each code), then
	// 16 bytes of low nibbles (element j low, element j+16 high); a code q stands for (q-16)*d.
	BlockQ5_0Size = 2 + 4 + QK5_0/2

	// QK5_1 is the number of elements in a Q5_1 block.
	QK5_1 = 32
	// BlockQ5_1Size is the byte size of block_q5_1: f16 d, f16 m, uint32 qh, 16 bytes of nibbles;
	// a code q stands for q*d + m.
	BlockQ5_1Size = 2 + 2 + 4 + QK5_1/2

	// QK_K is the number of elements in a K-quant (and IQ4_XS) super-block.
	QK_K = 256
	// KScaleSize is the size of the packed 6-bit scales and mins of Q4_K and Q5_K.
	KScaleSize = 12

	// BlockQ2_KSize is the byte size of block_q2_K: 16 scale/min nibble pairs, 64 bytes of 2-bit
	// codes, f16 d, f16 dmin.
	BlockQ2_KSize = QK_K/16 + QK_K/4 + 2 + 2
	// BlockQ3_KSize is the byte size of block_q3_K: 32 bytes hmask, 64 bytes of 2-bit codes,
	// 12 bytes of 6-bit scales, f16 d.
	BlockQ3_KSize = QK_K/8 + QK_K/4 + 12 + 2
	// BlockQ4_KSize is the byte size of block_q4_K: f16 d, f16 dmin, 12 bytes of scales and mins,
	// 128 bytes of nibbles.
	BlockQ4_KSize = 2 + 2 + KScaleSize + QK_K/2
	// BlockQ5_KSize is the byte size of block_q5_K: as Q4_K plus 32 bytes of fifth bits (qh)
	// before the nibbles.
	BlockQ5_KSize = 2 + 2 + KScaleSize + QK_K/8 + QK_K/2
	// BlockQ6_KSize is the byte size of block_q6_K: 128 bytes of low nibbles, 64 bytes of high
	// bit pairs, 16 int8 scales, f16 d.
	BlockQ6_KSize = QK_K/2 + QK_K/4 + QK_K/16 + 2
	// BlockQ8_KSize is the byte size of block_q8_K: f32 d, 256 int8 codes, 16 int16 sums of
	// 16 codes each.
	BlockQ8_KSize = 4 + QK_K + QK_K/16*2

	// QK4_NL is the number of elements in an IQ4_NL block.
	QK4_NL = 32
	// BlockIQ4_NLSize is the byte size of block_iq4_nl: f16 d, 16 bytes of codebook indices.
	BlockIQ4_NLSize = 2 + QK4_NL/2
	// BlockIQ4_XSSize is the byte size of block_iq4_xs: f16 d, uint16 scales_h, 4 bytes
	// scales_l, 128 bytes of codebook indices.
	BlockIQ4_XSSize = 2 + 2 + QK_K/64 + QK_K/2
)

// KValuesIQ4NL is ggml's kvalues_iq4nl: the 16 values a 4-bit IQ4_NL/IQ4_XS code stands for
// (before scaling), sorted ascending.
var KValuesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
