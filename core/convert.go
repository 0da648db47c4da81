package core

import (
	"unsafe"

	"github.com/tandem-ml/tandem/core/quant"
)

// The row conversions below reinterpret byte slices of host buffers as typed slices. Host buffers
// and arenas are allocated 32-byte aligned and tensor offsets/strides of these types are multiples
// of the element size, so the casts are aligned; amd64 and arm64 also tolerate unaligned access.

func f32View(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	// Safe: the slice covers exactly len(b)/4 whole float32 values inside b.
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func u16View(b []byte) []uint16 {
	if len(b) < 2 {
		return nil
	}
	// Safe: the slice covers exactly len(b)/2 whole uint16 values inside b.
	return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), len(b)/2)
}

func i32View(b []byte) []int32 {
	if len(b) < 4 {
		return nil
	}
	// Safe: the slice covers exactly len(b)/4 whole int32 values inside b.
	return unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func f32ToFloat(src []byte, dst []float32)   { copy(dst, f32View(src)) }
func f32FromFloat(src []float32, dst []byte) { copy(f32View(dst), src) }
func f16ToFloat(src []byte, dst []float32)   { quant.FP16ToFP32Row(u16View(src)[:len(dst)], dst) }
func f16FromFloat(src []float32, dst []byte) { quant.FP32ToFP16Row(src, u16View(dst)[:len(src)]) }
func bf16ToFloat(src []byte, dst []float32)  { quant.BF16ToFP32Row(u16View(src)[:len(dst)], dst) }
func bf16FromFloat(src []float32, dst []byte) {
	quant.FP32ToBF16Row(src, u16View(dst)[:len(src)])
}

func i32ToFloat(src []byte, dst []float32) {
	for i, v := range i32View(src)[:len(dst)] {
		dst[i] = float32(v)
	}
}

func i32FromFloat(src []float32, dst []byte) {
	d := i32View(dst)
	for i, v := range src {
		d[i] = int32(v)
	}
}
