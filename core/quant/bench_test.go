package quant

import (
	"math/rand/v2"
	"testing"
)

const benchN = 4096

func benchRow() []float32 {
	rng := rand.New(rand.NewPCG(7, 7))
	x := make([]float32, benchN)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// SetBytes counts the float32 side (4 bytes per element), so MB/s / 4 = Melements/s.

func BenchmarkFP16ToFP32Row(b *testing.B) {
	src := make([]uint16, benchN)
	FP32ToFP16Row(benchRow(), src)
	dst := make([]float32, benchN)
	b.SetBytes(4 * benchN)
	for b.Loop() {
		FP16ToFP32Row(src, dst)
	}
}

func BenchmarkFP32ToFP16Row(b *testing.B) {
	src := benchRow()
	dst := make([]uint16, benchN)
	b.SetBytes(4 * benchN)
	for b.Loop() {
		FP32ToFP16Row(src, dst)
	}
}

func BenchmarkFP32ToBF16Row(b *testing.B) {
	src := benchRow()
	dst := make([]uint16, benchN)
	b.SetBytes(4 * benchN)
	for b.Loop() {
		FP32ToBF16Row(src, dst)
	}
}

func BenchmarkQuantizeRowQ8_0(b *testing.B) {
	src := benchRow()
	dst := make([]byte, benchN/QK8_0*BlockQ8_0Size)
	b.SetBytes(4 * benchN)
	for b.Loop() {
		QuantizeRowQ8_0(src, dst)
	}
}

func BenchmarkQuantizeRowQ4_0(b *testing.B) {
	src := benchRow()
	dst := make([]byte, benchN/QK4_0*BlockQ4_0Size)
	b.SetBytes(4 * benchN)
	for b.Loop() {
		QuantizeRowQ4_0(src, dst)
	}
}

func BenchmarkDequantizeRowQ4_0(b *testing.B) {
	src := make([]byte, benchN/QK4_0*BlockQ4_0Size)
	QuantizeRowQ4_0(benchRow(), src)
	dst := make([]float32, benchN)
	b.SetBytes(4 * benchN)
	for b.Loop() {
		DequantizeRowQ4_0(src, dst)
	}
}

func BenchmarkDotQ4_0Q8_0(b *testing.B) {
	x := make([]byte, benchN/QK4_0*BlockQ4_0Size)
	y := make([]byte, benchN/QK8_0*BlockQ8_0Size)
	QuantizeRowQ4_0(benchRow(), x)
	QuantizeRowQ8_0(benchRow(), y)
	b.SetBytes(int64(len(x)))
	for b.Loop() {
		DotQ4_0Q8_0(benchN, x, y)
	}
}
