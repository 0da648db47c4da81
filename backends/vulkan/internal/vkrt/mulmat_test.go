//go:build cgo && !novulkan

package vkrt

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/backends/internal/gpuops"
)

const mmvPush = 19 * 4

// f16to32 decodes an IEEE half.
func f16to32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1F
	man := uint32(h) & 0x3FF
	switch exp {
	case 0:
		v := float32(man) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	case 31:
		return math.Float32frombits(sign | 0xFF<<23 | man<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}

// randHalf returns a random half of magnitude about 2^lo .. 2^hi.
func randHalf(r *rand.Rand, lo, hi int) uint16 {
	exp := uint16(15 + lo + r.IntN(hi-lo+1))
	return uint16(r.IntN(2))<<15 | exp<<10 | uint16(r.IntN(1024))
}

// quantType describes how the test encodes and decodes rows of one A type.
type quantType struct {
	name       string
	blockElems int // elements per block (1 for f32/f16)
	blockBytes int
	unitBytes  int                             // bytes per array unit of data_a
	random     func(r *rand.Rand, blk []byte)  // fills one block with random valid data
	decode     func(blk []byte, out []float32) // ggml semantics
}

var quantTypes = []quantType{
	{"f32", 1, 4, 4,
		func(r *rand.Rand, b []byte) { binary.LittleEndian.PutUint32(b, math.Float32bits(r.Float32()*2-1)) },
		func(b []byte, out []float32) { out[0] = math.Float32frombits(binary.LittleEndian.Uint32(b)) }},
	{"f16", 1, 2, 2,
		func(r *rand.Rand, b []byte) { binary.LittleEndian.PutUint16(b, randHalf(r, -6, 0)) },
		func(b []byte, out []float32) { out[0] = f16to32(binary.LittleEndian.Uint16(b)) }},
	{"q4_0", 32, 18, 2,
		func(r *rand.Rand, b []byte) {
			binary.LittleEndian.PutUint16(b, randHalf(r, -8, -3))
			for i := 2; i < 18; i++ {
				b[i] = byte(r.Uint32())
			}
		},
		func(b []byte, out []float32) {
			d := f16to32(binary.LittleEndian.Uint16(b))
			for j := range 16 {
				q := b[2+j]
				out[j] = float32(int(q&0xF)-8) * d
				out[j+16] = float32(int(q>>4)-8) * d
			}
		}},
	{"q4_1", 32, 20, 2,
		func(r *rand.Rand, b []byte) {
			binary.LittleEndian.PutUint16(b, randHalf(r, -8, -3))
			binary.LittleEndian.PutUint16(b[2:], randHalf(r, -4, -1))
			for i := 4; i < 20; i++ {
				b[i] = byte(r.Uint32())
			}
		},
		func(b []byte, out []float32) {
			d := f16to32(binary.LittleEndian.Uint16(b))
			m := f16to32(binary.LittleEndian.Uint16(b[2:]))
			for j := range 16 {
				q := b[4+j]
				out[j] = float32(q&0xF)*d + m
				out[j+16] = float32(q>>4)*d + m
			}
		}},
	{"q8_0", 32, 34, 2,
		func(r *rand.Rand, b []byte) {
			binary.LittleEndian.PutUint16(b, randHalf(r, -10, -6))
			for i := 2; i < 34; i++ {
				b[i] = byte(r.Uint32())
			}
		},
		func(b []byte, out []float32) {
			d := f16to32(binary.LittleEndian.Uint16(b))
			for j := range 32 {
				out[j] = float32(int8(b[2+j])) * d
			}
		}},
}

type mmvCase struct {
	k, m, n          int // K (row length), M (rows of A), N (columns of B)
	ne02, ne03       int // A batch dims
	ne12, ne13       int // B batch dims (multiples of ne02, ne03)
	rowPad           int // extra blocks between rows of A
	grid             [3]uint32
	offA, offB, offD int    // offsets in units / floats
	variant          string // "" or "_subgroup"
	wg               uint32 // workgroup size
}

func runMulMatVec(t *testing.T, d *Device, qt quantType, c mmvCase) {
	r := rand.New(rand.NewPCG(uint64(c.k), uint64(c.m*31+c.n)))
	blocksPerRow := c.k / qt.blockElems
	rowBlocks := blocksPerRow + c.rowPad
	rowBytes := rowBlocks * qt.blockBytes
	aMats := c.ne02 * c.ne03
	aBytes := c.offA*qt.unitBytes + aMats*c.m*rowBytes
	abuf := make([]byte, aBytes)
	a := make([]float32, aMats*c.m*c.k) // dequantized reference
	for mat := range aMats {
		for row := range c.m {
			for blk := range blocksPerRow {
				o := c.offA*qt.unitBytes + (mat*c.m+row)*rowBytes + blk*qt.blockBytes
				qt.random(r, abuf[o:o+qt.blockBytes])
				qt.decode(abuf[o:o+qt.blockBytes], a[(mat*c.m+row)*c.k+blk*qt.blockElems:])
			}
		}
	}
	bMats := c.ne12 * c.ne13
	b := make([]float32, c.offB+bMats*c.n*c.k)
	for i := range b {
		b[i] = r.Float32()*2 - 1
	}
	dlen := c.offD + bMats*c.n*c.m

	ab, err := d.NewBuffer(uint64(len(abuf)), DeviceBuffer)
	if err != nil {
		t.Fatal(err)
	}
	defer ab.Destroy()
	bb, err := d.NewBuffer(uint64(4*len(b)), DeviceBuffer)
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Destroy()
	db, err := d.NewBuffer(uint64(4*dlen), DeviceBuffer)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Destroy()
	if err := ab.Write(0, abuf); err != nil {
		t.Fatal(err)
	}
	if err := bb.Write(0, f32bytes(b)); err != nil {
		t.Fatal(err)
	}

	unitsPerBlock := uint32(qt.blockBytes / qt.unitBytes)
	nb01 := uint32(rowBlocks) * unitsPerBlock
	nb02 := nb01 * uint32(c.m)
	nb03 := nb02 * uint32(c.ne02)
	nb11 := uint32(c.k)
	nb12 := nb11 * uint32(c.n)
	nb13 := nb12 * uint32(c.ne12)
	nb1 := uint32(c.m)
	nb2 := nb1 * uint32(c.n)
	nb3 := nb2 * uint32(c.ne12)
	var push gpuops.Push
	push.U32(uint32(c.k), uint32(c.m), uint32(c.n), uint32(bMats))
	push.U32(uint32(c.offA), uint32(c.offB), uint32(c.offD))
	push.U32(nb01, nb02, nb03, nb11, nb12, nb13, nb1, nb2, nb3)
	push.U32(uint32(c.ne12), uint32(c.ne12/c.ne02), uint32(c.ne13/c.ne03))

	p := pipeline(t, d, "mul_mat_vec_"+qt.name+"_f32"+c.variant, 3, mmvPush, c.wg)
	err = d.Run(func(cmd *Commands) error {
		return cmd.Dispatch(p, c.grid, push.Bytes(), Bind(ab), Bind(bb), Bind(db))
	})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 4*dlen)
	if err := db.Read(0, out); err != nil {
		t.Fatal(err)
	}
	got := bytesf32(out)[c.offD:]

	var num, den float64
	for i13 := range c.ne13 {
		for i12 := range c.ne12 {
			amat := (i13/(c.ne13/c.ne03))*c.ne02 + i12/(c.ne12/c.ne02)
			bmat := i13*c.ne12 + i12
			for col := range c.n {
				for row := range c.m {
					var want float64
					for k := range c.k {
						want += float64(a[(amat*c.m+row)*c.k+k]) * float64(b[c.offB+(bmat*c.n+col)*c.k+k])
					}
					g := float64(got[(bmat*c.n+col)*c.m+row])
					num += (g - want) * (g - want)
					den += want * want
				}
			}
		}
	}
	if nmse := num / den; !(nmse <= 1e-9) {
		t.Fatalf("NMSE %g (limit 1e-9; ggml's is 5e-4)", nmse)
	}
}

func TestMulMatVec(t *testing.T) {
	d := testDevice(t)
	if !d.Info().Features.StorageBuffer16BitAccess {
		t.Skip("device lacks storageBuffer16BitAccess")
	}
	for _, qt := range quantTypes {
		cases := []mmvCase{
			{k: 128, m: 7, n: 1, ne02: 1, ne03: 1, ne12: 1, ne13: 1, grid: [3]uint32{7, 1, 1}},
			{k: 96, m: 5, n: 3, ne02: 2, ne03: 1, ne12: 4, ne13: 2, rowPad: 1, grid: [3]uint32{2, 2, 3}, offA: 9 * 2, offB: 5, offD: 3},
		}
		if qt.blockElems == 1 {
			cases = append(cases, mmvCase{k: 37, m: 4, n: 2, ne02: 1, ne03: 1, ne12: 1, ne13: 1, rowPad: 3, grid: [3]uint32{4, 2, 1}, offA: 1, offB: 1})
		}
		variants := []string{""}
		sg := d.Info().Subgroup
		if sg.Operations&SubgroupArithmetic != 0 && sg.Stages&0x20 != 0 { // VK_SHADER_STAGE_COMPUTE_BIT
			variants = append(variants, "_subgroup")
		}
		for _, v := range variants {
			for _, wg := range []uint32{32, 64} {
				for i, c := range cases {
					c.variant, c.wg = v, wg
					t.Run(fmt.Sprintf("%s%s/wg%d/%d", qt.name, v, wg, i), func(t *testing.T) { runMulMatVec(t, d, qt, c) })
				}
			}
		}
	}
}
