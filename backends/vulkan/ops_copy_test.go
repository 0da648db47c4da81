//go:build cgo && !novulkan

package vulkan

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/backends/internal/gputest"
	"github.com/tandem-ml/tandem/core"
)

// quantTestValues returns nblk blocks of 32 values that stress the reference
// quantizers: random scales over many decades, all-zero and constant blocks,
// negative and positive extremes, ties (x/d + 8.5 or x/d exactly halfway), and
// repeated maxima of both signs.
func quantTestValues(r *rand.Rand, nblk int) []float32 {
	v := make([]float32, 32*nblk)
	for b := range nblk {
		x := v[32*b : 32*b+32]
		scale := float32(math.Pow(10, float64(r.IntN(12)-6)))
		switch b % 8 {
		case 0: // all zero (q4_0 stores d = -0)
		case 1: // constant
			for j := range x {
				x[j] = scale
			}
		case 2: // multiples of d: q4_0 ties at x/d + 8.5
			d := scale / 8
			for j := range x {
				x[j] = d * float32(r.IntN(17)-8)
			}
		case 3: // q8_0 halfway values
			d := scale / 127
			for j := range x {
				x[j] = d * (float32(r.IntN(254)-127) + 0.5)
			}
			x[0] = scale
		case 4: // equal magnitude, both signs: the first one wins in q4_0
			for j := range x {
				x[j] = scale * (2*r.Float32() - 1)
			}
			x[3], x[9] = -scale*2, scale*2
		default:
			for j := range x {
				x[j] = scale * (2*r.Float32() - 1)
			}
		}
	}
	return v
}

// TestCopyQuantizeBitExact checks that CPY f32 -> q4_0/q4_1/q8_0 writes exactly
// the bytes of core/quant's reference quantizer, and f32 -> f16/bf16 exactly the
// reference rounding (specials included).
func TestCopyQuantizeBitExact(t *testing.T) {
	be := newBackend(t)
	if !be.dev.info.Features.StorageBuffer16BitAccess {
		t.Skip("no 16-bit storage")
	}
	r := rand.New(rand.NewPCG(7, 11))
	const nblk = 512
	vals := quantTestValues(r, nblk)
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		65504, 65519.99, 65520, 1e-8, 5.96e-8, 2.98e-8, 2.9802322e-08, 6.1e-5, 1e-40, -1e-40,
		1.00048828125, 1.000732421875, math.MaxFloat32, float32(math.NaN()), 3.0000002}
	copy(vals[len(vals)-len(specials):], specials) // with NaN: a NaN block in every quantized type
	// Blocks with infinities only, and with one NaN: core/quant's rule for non-finite blocks.
	inf := float32(math.Inf(1))
	vals[len(vals)-64+3], vals[len(vals)-64+17], vals[len(vals)-64+30] = inf, -inf, inf
	vals[len(vals)-96+7] = float32(math.NaN())
	for _, typ := range []core.Type{core.TypeQ4_0, core.TypeQ4_1, core.TypeQ8_0, core.TypeF16, core.TypeBF16} {
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		n := int64(len(vals))
		src := ctx.NewTensor1D(core.TypeF32, n)
		dst := ctx.NewTensor1D(typ, n)
		out := ctx.Cpy(src, dst)
		allocCtx(t, ctx, be.DefaultBufferType())
		if err := core.SetFloat32s(src, vals[:n]); err != nil {
			t.Fatal(err)
		}
		compute(t, be, out)
		got := make([]byte, dst.NBytes())
		if err := core.TensorGet(dst, got, 0); err != nil {
			t.Fatal(err)
		}
		want := make([]byte, dst.NBytes())
		if err := typ.FromFloat(vals[:n], want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			bs, es := typ.BlockSize(), typ.Size()
			for i := int64(0); i < int64(len(got)); i += es {
				if !bytes.Equal(got[i:i+es], want[i:i+es]) {
					b := i / es
					t.Errorf("%v: block %d differs: got % x want % x (values %v)", typ, b, got[i:i+es], want[i:i+es], vals[b*bs:(b+1)*bs])
					break
				}
			}
		}
	}
}

// TestCopyF16ToF32AllBits converts every f16 bit pattern to f32 and back.
func TestCopyF16ToF32AllBits(t *testing.T) {
	be := newBackend(t)
	if !be.dev.info.Features.StorageBuffer16BitAccess {
		t.Skip("no 16-bit storage")
	}
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	h := ctx.NewTensor1D(core.TypeF16, 1<<16)
	f := ctx.Cast(h, core.TypeF32)
	back := ctx.Cast(f, core.TypeF16)
	allocCtx(t, ctx, be.DefaultBufferType())
	raw := make([]byte, 2<<16)
	for i := range 1 << 16 {
		raw[2*i], raw[2*i+1] = byte(i), byte(i>>8)
	}
	if err := core.TensorSet(h, raw, 0); err != nil {
		t.Fatal(err)
	}
	compute(t, be, back)
	gotF := make([]byte, 4<<16)
	if err := core.TensorGet(f, gotF, 0); err != nil {
		t.Fatal(err)
	}
	wantF := make([]float32, 1<<16)
	if err := core.TypeF16.ToFloat(raw, wantF); err != nil {
		t.Fatal(err)
	}
	for i, w := range wantF {
		g := uint32(gotF[4*i]) | uint32(gotF[4*i+1])<<8 | uint32(gotF[4*i+2])<<16 | uint32(gotF[4*i+3])<<24
		if g != math.Float32bits(w) {
			t.Fatalf("f16 %#04x -> f32 %#08x, want %#08x", i, g, math.Float32bits(w))
		}
	}
	gotH := make([]byte, 2<<16)
	if err := core.TensorGet(back, gotH, 0); err != nil {
		t.Fatal(err)
	}
	wantH := make([]byte, 2<<16)
	if err := core.TypeF16.FromFloat(wantF, wantH); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotH, wantH) {
		t.Fatal("f32 -> f16 round trip differs from the reference")
	}
}

// TestCopyI16Permuted: CONT of permuted i16 tensors (test-backend-ops' DUP cases of GGML_TYPE_I16)
// moves every 16-bit element to its place, bit for bit.
func TestCopyI16Permuted(t *testing.T) {
	be := newBackend(t)
	if !be.dev.info.Features.StorageBuffer16BitAccess {
		t.Skip("no 16-bit storage")
	}
	const n0, n1, n2 = 10, 8, 3
	for _, perm := range [][4]int{{0, 1, 2, 3}, {0, 2, 1, 3}, {1, 2, 0, 3}} {
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		a := ctx.NewTensor(core.TypeI16, n0, n1, n2)
		p := ctx.Permute(a, perm[0], perm[1], perm[2], perm[3])
		out := ctx.Cont(p)
		allocCtx(t, ctx, be.DefaultBufferType())
		raw := make([]byte, a.NBytes())
		for i := range raw {
			raw[i] = byte(i*37 + i/7)
		}
		if err := core.TensorSet(a, raw, 0); err != nil {
			t.Fatal(err)
		}
		compute(t, be, out)
		got := make([]byte, out.NBytes())
		if err := core.TensorGet(out, got, 0); err != nil {
			t.Fatal(err)
		}
		// Element (j0, j1, j2) of the contiguous result is p's, which reads a at p's strides.
		k := 0
		for j2 := int64(0); j2 < out.Ne[2]; j2++ {
			for j1 := int64(0); j1 < out.Ne[1]; j1++ {
				for j0 := int64(0); j0 < out.Ne[0]; j0++ {
					o := j0*p.Nb[0] + j1*p.Nb[1] + j2*p.Nb[2]
					if got[2*k] != raw[o] || got[2*k+1] != raw[o+1] {
						t.Fatalf("perm %v: element %d = %x%x, want %x%x", perm, k, got[2*k+1], got[2*k], raw[o+1], raw[o])
					}
					k++
				}
			}
		}
	}
}

// TestConcatI8: CONCAT of i8 tensors (eltwise_copy_b8) along every dimension, bit for bit.
func TestConcatI8(t *testing.T) { gputest.ConcatI8(t, newBackend(t)) }
