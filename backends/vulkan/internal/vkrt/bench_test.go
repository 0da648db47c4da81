//go:build cgo && !novulkan

package vkrt

import (
	"fmt"
	"testing"

	"github.com/tandem-ml/tandem/backends/internal/gpuops"
)

// BenchmarkDispatchRoundTrip measures one tiny dispatch recorded, submitted
// and waited for (Begin/Dispatch/Submit/Wait/Release): the fixed cost of a
// synchronous GPU call.
func BenchmarkDispatchRoundTrip(b *testing.B) {
	d := testDevice(b)
	const n = 256
	s := contiguous([4]uint32{n, 1, 1, 1})
	buf, err := d.NewBuffer(4*n, DeviceBuffer)
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Destroy()
	p := pipeline(b, d, "add_f32", 3, binaryPush, 64)
	push := binaryPushConstants(s, s, s)
	b.ResetTimer()
	for b.Loop() {
		err := d.Run(func(c *Commands) error {
			return c.Dispatch(p, [3]uint32{4, 1, 1}, push, Bind(buf), Bind(buf), Bind(buf))
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/roundtrip")
}

// BenchmarkEmptySubmit measures a submit of an empty command buffer and the
// wait for its fence.
func BenchmarkEmptySubmit(b *testing.B) {
	d := testDevice(b)
	for b.Loop() {
		if err := d.Run(func(*Commands) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/submit")
}

// BenchmarkRecordDispatch measures recording alone (descriptor set, binds,
// push constants, dispatch, barrier), 64 dispatches per command buffer.
func BenchmarkRecordDispatch(b *testing.B) {
	d := testDevice(b)
	const n = 256
	s := contiguous([4]uint32{n, 1, 1, 1})
	buf, err := d.NewBuffer(4*n, DeviceBuffer)
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Destroy()
	p := pipeline(b, d, "add_f32", 3, binaryPush, 64)
	push := binaryPushConstants(s, s, s)
	var c *Commands
	recorded := 0
	for b.Loop() {
		if c == nil {
			if c, err = d.Begin(); err != nil {
				b.Fatal(err)
			}
		}
		if err := c.Dispatch(p, [3]uint32{1, 1, 1}, push, Bind(buf), Bind(buf), Bind(buf)); err != nil {
			b.Fatal(err)
		}
		if err := c.Barrier(); err != nil {
			b.Fatal(err)
		}
		if recorded++; recorded == 64 {
			c.Release()
			c, recorded = nil, 0
		}
	}
	if c != nil {
		c.Release()
	}
}

// BenchmarkMulMatVec reports GFLOPS of 1024x1024 matrix-vector products per A
// type, reduction and workgroup size.
func BenchmarkMulMatVec(b *testing.B) {
	for _, typ := range []string{"f32", "q4_0"} {
		for _, red := range []string{"", "_subgroup"} {
			for _, wg := range []uint32{32, 64, 128} {
				b.Run(fmt.Sprintf("%s%s/wg%d", typ, red, wg), func(b *testing.B) { benchMulMatVec(b, typ, red, wg) })
			}
		}
	}
}

func benchMulMatVec(b *testing.B, typ, red string, wg uint32) {
	bytesPerElem := 4.0
	if typ == "q4_0" {
		bytesPerElem = 18.0 / 32
	}
	d := testDevice(b)
	const k, m = 1024, 1024
	var unitsPerRow uint32 = k
	if typ == "q4_0" {
		unitsPerRow = k / 32 * 9
	}
	ab, err := d.NewBuffer(uint64(float64(k*m)*bytesPerElem), DeviceBuffer)
	if err != nil {
		b.Fatal(err)
	}
	defer ab.Destroy()
	bb, _ := d.NewBuffer(4*k, DeviceBuffer)
	defer bb.Destroy()
	db, _ := d.NewBuffer(4*m, DeviceBuffer)
	defer db.Destroy()
	if err := ab.Memset(0, ab.Size(), 0x11); err != nil {
		b.Fatal(err)
	}
	var push gpuops.Push
	push.U32(k, m, 1, 1, 0, 0, 0, unitsPerRow, unitsPerRow*m, unitsPerRow*m, k, k, k, m, m, m, 1, 1, 1)
	p := pipeline(b, d, "mul_mat_vec_"+typ+"_f32"+red, 3, mmvPush, wg)
	for b.Loop() {
		err := d.Run(func(c *Commands) error {
			return c.Dispatch(p, [3]uint32{m, 1, 1}, push.Bytes(), Bind(ab), Bind(bb), Bind(db))
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*k*m*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
}
