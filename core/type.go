package core

import (
	"fmt"

	"github.com/tandem-ml/tandem/core/quant"
)

// Type is an element type. Its numeric value is ggml's, so GGUF type ids map directly.
type Type int32

// Element types (ggml's ids).
const (
	TypeF32  Type = 0
	TypeF16  Type = 1
	TypeQ4_0 Type = 2
	TypeQ4_1 Type = 3
	TypeQ5_0 Type = 6
	TypeQ5_1 Type = 7
	TypeQ8_0 Type = 8
	TypeQ8_1 Type = 9
	TypeQ2_K Type = 10
	TypeQ3_K Type = 11
	TypeQ4_K Type = 12
	TypeQ5_K Type = 13
	TypeQ6_K Type = 14
	TypeQ8_K Type = 15
	// TypeIQ4_NL is ggml's 4-bit non-linear codebook type (blocks of 32).
	TypeIQ4_NL Type = 20
	// TypeIQ4_XS is ggml's IQ4_NL codebook with 6-bit sub-block scales (super-blocks of 256).
	TypeIQ4_XS Type = 23
	TypeI8     Type = 24
	TypeI16    Type = 25
	TypeI32    Type = 26
	TypeI64    Type = 27
	// TypeF64 is ggml's 8-byte float. ggml's CPU has no conversion for it: it only copies F64
	// tensors into F64 (DUP, CPY, CONT) and views them.
	TypeF64  Type = 28
	TypeBF16 Type = 30
	// TypeTQ1_0 is ggml's ternary type at 1.6875 bits: five trits per byte, one f16 scale per 256.
	TypeTQ1_0 Type = 34
	// TypeTQ2_0 is ggml's ternary type at 2.0625 bits: 2-bit codes, one f16 scale per 256.
	TypeTQ2_0 Type = 35
	// TypeMXFP4 is ggml's OCP microscaling FP4: E2M1 codes with one E8M0 scale per 32 values.
	TypeMXFP4 Type = 39
	// TypeNVFP4 is ggml's NVFP4: E2M1 codes with one UE4M3 scale per 16 values (blocks of 64).
	TypeNVFP4 Type = 40
	// TypeQ1_0 is ggml's 1-bit type: a sign bit per value and one f16 magnitude per 128 values.
	TypeQ1_0 Type = 41
	// TypeIQ3_XXS is ggml's 3.0625-bit lattice type: grid entries of four magnitudes, packed
	// signs, a 4-bit scale per 32 and an f16 scale per 256. ggml's CPU has no quantizer for it.
	TypeIQ3_XXS Type = 18
	// TypeIQ3_S is ggml's 3.4375-bit lattice type (a 512-entry grid, explicit sign bytes, 4-bit
	// scales per 32, f16 per 256). ggml's CPU has no quantizer for it.
	TypeIQ3_S Type = 21
	// TypeQ2_0 is ggml's 2-bit type: codes for −d, 0, d, 2d with one f16 scale d per 64 values.
	TypeQ2_0 Type = 42
	// TypeIQ2_XXS is ggml's 2.0625-bit lattice type: 8-value grid entries of magnitudes, 7-bit
	// sign indices, a 4-bit scale per 32 and an f16 scale per 256. ggml's CPU has no quantizer
	// for it (nor for the other IQ2 and IQ1 types).
	TypeIQ2_XXS Type = 16
	// TypeIQ2_XS is ggml's 2.3125-bit lattice type (512-entry grid, 4-bit scales per 16).
	TypeIQ2_XS Type = 17
	// TypeIQ2_S is ggml's 2.5625-bit lattice type (1024-entry grid, explicit sign bytes).
	TypeIQ2_S Type = 22
	// TypeIQ1_S is ggml's 1.5625-bit type: 2048 ternary grid entries shifted by ±1/8, a 3-bit
	// scale per 32 and an f16 scale per 256.
	TypeIQ1_S Type = 19
	// TypeIQ1_M is ggml's 1.75-bit type: IQ1_S's grid with 3-bit scales per 16 and a delta sign
	// per 8; its f16 scale is spread over the scale words' top nibbles.
	TypeIQ1_M Type = 29
)

// typeTraits describes the storage of one type.
type typeTraits struct {
	name      string
	blockSize int64 // elements per block
	typeSize  int64 // bytes per block
	quantized bool
	toFloat   func(src []byte, dst []float32) // reference row conversion; nil for integer types
	fromFloat func(src []float32, dst []byte) // reference row conversion; nil where not available
}

// traitTable is indexed by Type; nil entries are unknown types.
var traitTable [64]*typeTraits

func init() {
	traitTable[TypeF32] = &typeTraits{name: "f32", blockSize: 1, typeSize: 4, toFloat: f32ToFloat, fromFloat: f32FromFloat}
	traitTable[TypeF16] = &typeTraits{name: "f16", blockSize: 1, typeSize: 2, toFloat: f16ToFloat, fromFloat: f16FromFloat}
	traitTable[TypeBF16] = &typeTraits{name: "bf16", blockSize: 1, typeSize: 2, toFloat: bf16ToFloat, fromFloat: bf16FromFloat}
	traitTable[TypeQ4_0] = &typeTraits{name: "q4_0", blockSize: quant.QK4_0, typeSize: quant.BlockQ4_0Size, quantized: true,
		toFloat: quant.DequantizeRowQ4_0, fromFloat: quant.QuantizeRowQ4_0}
	traitTable[TypeQ4_1] = &typeTraits{name: "q4_1", blockSize: quant.QK4_1, typeSize: quant.BlockQ4_1Size, quantized: true,
		toFloat: quant.DequantizeRowQ4_1, fromFloat: quant.QuantizeRowQ4_1}
	traitTable[TypeQ8_0] = &typeTraits{name: "q8_0", blockSize: quant.QK8_0, typeSize: quant.BlockQ8_0Size, quantized: true,
		toFloat: quant.DequantizeRowQ8_0, fromFloat: quant.QuantizeRowQ8_0}
	traitTable[TypeQ8_1] = &typeTraits{name: "q8_1", blockSize: quant.QK8_1, typeSize: quant.BlockQ8_1Size, quantized: true,
		toFloat: quant.DequantizeRowQ8_1, fromFloat: quant.QuantizeRowQ8_1}
	traitTable[TypeQ5_0] = &typeTraits{name: "q5_0", blockSize: quant.QK5_0, typeSize: quant.BlockQ5_0Size, quantized: true,
		toFloat: quant.DequantizeRowQ5_0, fromFloat: quant.QuantizeRowQ5_0}
	traitTable[TypeQ5_1] = &typeTraits{name: "q5_1", blockSize: quant.QK5_1, typeSize: quant.BlockQ5_1Size, quantized: true,
		toFloat: quant.DequantizeRowQ5_1, fromFloat: quant.QuantizeRowQ5_1}
	traitTable[TypeQ2_K] = &typeTraits{name: "q2_K", blockSize: quant.QK_K, typeSize: quant.BlockQ2_KSize, quantized: true,
		toFloat: quant.DequantizeRowQ2_K, fromFloat: quant.QuantizeRowQ2_K}
	traitTable[TypeQ3_K] = &typeTraits{name: "q3_K", blockSize: quant.QK_K, typeSize: quant.BlockQ3_KSize, quantized: true,
		toFloat: quant.DequantizeRowQ3_K, fromFloat: quant.QuantizeRowQ3_K}
	traitTable[TypeQ4_K] = &typeTraits{name: "q4_K", blockSize: quant.QK_K, typeSize: quant.BlockQ4_KSize, quantized: true,
		toFloat: quant.DequantizeRowQ4_K, fromFloat: quant.QuantizeRowQ4_K}
	traitTable[TypeQ5_K] = &typeTraits{name: "q5_K", blockSize: quant.QK_K, typeSize: quant.BlockQ5_KSize, quantized: true,
		toFloat: quant.DequantizeRowQ5_K, fromFloat: quant.QuantizeRowQ5_K}
	traitTable[TypeQ6_K] = &typeTraits{name: "q6_K", blockSize: quant.QK_K, typeSize: quant.BlockQ6_KSize, quantized: true,
		toFloat: quant.DequantizeRowQ6_K, fromFloat: quant.QuantizeRowQ6_K}
	traitTable[TypeQ8_K] = &typeTraits{name: "q8_K", blockSize: quant.QK_K, typeSize: quant.BlockQ8_KSize, quantized: true,
		toFloat: quant.DequantizeRowQ8_K, fromFloat: quant.QuantizeRowQ8_K}
	traitTable[TypeIQ4_NL] = &typeTraits{name: "iq4_nl", blockSize: quant.QK4_NL, typeSize: quant.BlockIQ4_NLSize, quantized: true,
		toFloat: quant.DequantizeRowIQ4_NL, fromFloat: quant.QuantizeRowIQ4_NL}
	traitTable[TypeIQ4_XS] = &typeTraits{name: "iq4_xs", blockSize: quant.QK_K, typeSize: quant.BlockIQ4_XSSize, quantized: true,
		toFloat: quant.DequantizeRowIQ4_XS, fromFloat: quant.QuantizeRowIQ4_XS}
	traitTable[TypeMXFP4] = &typeTraits{name: "mxfp4", blockSize: quant.QK_MXFP4, typeSize: quant.BlockMXFP4Size, quantized: true,
		toFloat: quant.DequantizeRowMXFP4, fromFloat: quant.QuantizeRowMXFP4}
	traitTable[TypeNVFP4] = &typeTraits{name: "nvfp4", blockSize: quant.QK_NVFP4, typeSize: quant.BlockNVFP4Size, quantized: true,
		toFloat: quant.DequantizeRowNVFP4, fromFloat: quant.QuantizeRowNVFP4}
	traitTable[TypeQ1_0] = &typeTraits{name: "q1_0", blockSize: quant.QK1_0, typeSize: quant.BlockQ1_0Size, quantized: true,
		toFloat: quant.DequantizeRowQ1_0, fromFloat: quant.QuantizeRowQ1_0}
	traitTable[TypeI8] = &typeTraits{name: "i8", blockSize: 1, typeSize: 1}
	traitTable[TypeI16] = &typeTraits{name: "i16", blockSize: 1, typeSize: 2}
	traitTable[TypeI32] = &typeTraits{name: "i32", blockSize: 1, typeSize: 4, toFloat: i32ToFloat, fromFloat: i32FromFloat}
	traitTable[TypeI64] = &typeTraits{name: "i64", blockSize: 1, typeSize: 8}
	traitTable[TypeF64] = &typeTraits{name: "f64", blockSize: 1, typeSize: 8}
	traitTable[TypeTQ1_0] = &typeTraits{name: "tq1_0", blockSize: quant.QK_K, typeSize: quant.BlockTQ1_0Size, quantized: true,
		toFloat: quant.DequantizeRowTQ1_0, fromFloat: quant.QuantizeRowTQ1_0}
	traitTable[TypeTQ2_0] = &typeTraits{name: "tq2_0", blockSize: quant.QK_K, typeSize: quant.BlockTQ2_0Size, quantized: true,
		toFloat: quant.DequantizeRowTQ2_0, fromFloat: quant.QuantizeRowTQ2_0}
	traitTable[TypeIQ3_XXS] = &typeTraits{name: "iq3_xxs", blockSize: quant.QK_K, typeSize: quant.BlockIQ3_XXSSize, quantized: true,
		toFloat: quant.DequantizeRowIQ3_XXS}
	traitTable[TypeIQ3_S] = &typeTraits{name: "iq3_s", blockSize: quant.QK_K, typeSize: quant.BlockIQ3_SSize, quantized: true,
		toFloat: quant.DequantizeRowIQ3_S}
	traitTable[TypeQ2_0] = &typeTraits{name: "q2_0", blockSize: quant.QK2_0, typeSize: quant.BlockQ2_0Size, quantized: true,
		toFloat: quant.DequantizeRowQ2_0, fromFloat: quant.QuantizeRowQ2_0}
	traitTable[TypeIQ2_XXS] = &typeTraits{name: "iq2_xxs", blockSize: quant.QK_K, typeSize: quant.BlockIQ2_XXSSize, quantized: true,
		toFloat: quant.DequantizeRowIQ2_XXS}
	traitTable[TypeIQ2_XS] = &typeTraits{name: "iq2_xs", blockSize: quant.QK_K, typeSize: quant.BlockIQ2_XSSize, quantized: true,
		toFloat: quant.DequantizeRowIQ2_XS}
	traitTable[TypeIQ2_S] = &typeTraits{name: "iq2_s", blockSize: quant.QK_K, typeSize: quant.BlockIQ2_SSize, quantized: true,
		toFloat: quant.DequantizeRowIQ2_S}
	traitTable[TypeIQ1_S] = &typeTraits{name: "iq1_s", blockSize: quant.QK_K, typeSize: quant.BlockIQ1_SSize, quantized: true,
		toFloat: quant.DequantizeRowIQ1_S}
	traitTable[TypeIQ1_M] = &typeTraits{name: "iq1_m", blockSize: quant.QK_K, typeSize: quant.BlockIQ1_MSize, quantized: true,
		toFloat: quant.DequantizeRowIQ1_M}
}

func (t Type) traits() *typeTraits {
	if t < 0 || int(t) >= len(traitTable) {
		return nil
	}
	return traitTable[t]
}

// Valid reports whether t is a type tandem knows.
func (t Type) Valid() bool { return t.traits() != nil }

// String returns ggml's name of the type ("f32", "q4_0", ...).
func (t Type) String() string {
	if tr := t.traits(); tr != nil {
		return tr.name
	}
	return fmt.Sprintf("type(%d)", int32(t))
}

// BlockSize is the number of elements in one block (1 for plain types, 32 or 256 for quantized ones).
func (t Type) BlockSize() int64 {
	if tr := t.traits(); tr != nil {
		return tr.blockSize
	}
	return 1
}

// Size is the number of bytes of one block (of one element for plain types).
func (t Type) Size() int64 {
	if tr := t.traits(); tr != nil {
		return tr.typeSize
	}
	return 0
}

// IsQuantized reports whether t stores elements in scaled blocks.
func (t Type) IsQuantized() bool {
	if tr := t.traits(); tr != nil {
		return tr.quantized
	}
	return false
}

// IsFloat reports whether t is F32, F16 or BF16.
func (t Type) IsFloat() bool { return t == TypeF32 || t == TypeF16 || t == TypeBF16 }

// RowSize is the number of bytes that n elements of type t occupy; n must be a multiple of BlockSize.
func (t Type) RowSize(n int64) int64 { return t.Size() * n / t.BlockSize() }

// CanConvert reports whether rows of t convert to and from float32 (ToFloat and FromFloat work).
func (t Type) CanConvert() bool { return t.CanDequantize() && t.traits().fromFloat != nil }

// CanDequantize reports whether rows of t convert to float32 (ToFloat works). It differs from
// CanConvert for the types ggml dequantizes but has no CPU quantizer for (IQ3_XXS, IQ3_S,
// IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M): they are read (MUL_MAT, GET_ROWS, copies into f32)
// but never written from floats.
func (t Type) CanDequantize() bool {
	tr := t.traits()
	return tr != nil && tr.toFloat != nil
}

// ToFloat converts a row of n = len(dst) elements stored as t into float32 with the reference
// conversion. len(dst) must be a multiple of the block size and src must hold RowSize(len(dst)) bytes.
func (t Type) ToFloat(src []byte, dst []float32) error {
	tr := t.traits()
	if tr == nil || tr.toFloat == nil {
		return fmt.Errorf("tandem: type %v has no conversion to f32", t)
	}
	n := int64(len(dst))
	if n%tr.blockSize != 0 {
		return fmt.Errorf("tandem: %d elements is not a whole number of %v blocks (%d)", n, t, tr.blockSize)
	}
	if int64(len(src)) < t.RowSize(n) {
		return fmt.Errorf("tandem: %v row of %d elements needs %d bytes, got %d", t, n, t.RowSize(n), len(src))
	}
	tr.toFloat(src[:t.RowSize(n)], dst)
	return nil
}

// FromFloat converts float32 values into a row of type t (quantizing with ggml's reference rounding).
// len(src) must be a multiple of the block size and dst must hold RowSize(len(src)) bytes.
func (t Type) FromFloat(src []float32, dst []byte) error {
	tr := t.traits()
	if tr == nil || tr.fromFloat == nil {
		return fmt.Errorf("tandem: type %v has no conversion from f32", t)
	}
	n := int64(len(src))
	if n%tr.blockSize != 0 {
		return fmt.Errorf("tandem: %d elements is not a whole number of %v blocks (%d)", n, t, tr.blockSize)
	}
	if int64(len(dst)) < t.RowSize(n) {
		return fmt.Errorf("tandem: %v row of %d elements needs %d bytes, got %d", t, n, t.RowSize(n), len(dst))
	}
	tr.fromFloat(src, dst[:t.RowSize(n)])
	return nil
}

// VecDotType is the type the CPU backend converts activations into before a dot product with
// weights of type t (ggml's vec_dot_type): F32→F32, F16→F16, BF16→BF16,
// Q4_0/Q5_0/Q8_0/IQ4_NL/MXFP4/NVFP4/Q1_0/Q2_0→Q8_0, Q4_1/Q5_1→Q8_1,
// Q2_K…Q6_K/IQ4_XS/TQ1_0/TQ2_0/IQ3_XXS/IQ3_S/IQ2_XXS/IQ2_XS/IQ2_S/IQ1_S/IQ1_M→Q8_K. Other
// types map to themselves.
func (t Type) VecDotType() Type {
	switch t {
	case TypeQ4_0, TypeQ5_0, TypeQ8_0, TypeIQ4_NL, TypeMXFP4, TypeNVFP4, TypeQ1_0, TypeQ2_0:
		return TypeQ8_0
	case TypeQ4_1, TypeQ5_1:
		return TypeQ8_1
	case TypeQ2_K, TypeQ3_K, TypeQ4_K, TypeQ5_K, TypeQ6_K, TypeIQ4_XS, TypeTQ1_0, TypeTQ2_0, TypeIQ3_XXS, TypeIQ3_S,
		TypeIQ2_XXS, TypeIQ2_XS, TypeIQ2_S, TypeIQ1_S, TypeIQ1_M:
		return TypeQ8_K
	}
	return t
}

// TypeByName finds the type ggml prints as name ("f32", "q4_K", "iq4_xs"); ok is false for a name
// no type has.
func TypeByName(name string) (t Type, ok bool) {
	for id := range Type(len(traitTable)) {
		if id.Valid() && id.String() == name {
			return id, true
		}
	}
	return 0, false
}
