package gputest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// GetRowsSplit runs GET_ROWS whose result or source is larger than one storage binding on be,
// with the device's binding limit lowered to 64 KiB through limit (the backend's gpuops.Device
// field, restored at the end): an f32 source, 150 result rows of 1 KiB a plane (each plane in
// parts of rows); a q4_0 source, 30 rows a plane (two planes a part); sources of 120 KiB (f32),
// 84 KiB (q4_0) and 80 KiB (MXFP4, addressed in bytes) bound a plane at a time; each result
// element checked against the source row it names, and bad indices in late parts reported at
// their own positions, as the CPU reports them. A result whose single row exceeds the limit is
// not supported.
func GetRowsSplit(t *testing.T, be core.Backend, limit *uint32) {
	t.Helper()
	old := *limit
	*limit = 64 << 10
	defer func() { *limit = old }()
	r := rand.New(rand.NewPCG(5, 150))

	run := func(name string, typ, ityp core.Type, ne0, srcRows, n, ne2, ne3 int64, bad int64) {
		t.Helper()
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		a := ctx.NewTensor(typ, ne0, srcRows, ne2, ne3)
		idx := ctx.NewTensor(ityp, n, ne2, ne3)
		out := ctx.GetRows(a, idx)
		if !be.Device().SupportsOp(out) {
			t.Fatalf("%s: GET_ROWS %v of %d bytes not supported under a 64 KiB binding", name, out, out.NBytes())
		}
		AllocCtx(t, ctx, be.DefaultBufferType())
		vals := make([]float32, a.NElements())
		for i := range vals {
			vals[i] = 2*r.Float32() - 1
		}
		if err := core.SetFloat32s(a, vals); err != nil {
			t.Fatal(err)
		}
		src, err := core.GetFloat32s(a) // as a holds them (quantized)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]int64, idx.NElements())
		for i := range ids {
			ids[i] = r.Int64N(srcRows)
		}
		if bad >= 0 {
			ids[bad] = srcRows + 3
		}
		es := ityp.Size()
		raw := make([]byte, es*int64(len(ids)))
		for i, v := range ids {
			if es == 8 {
				binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
			} else {
				binary.LittleEndian.PutUint32(raw[4*i:], uint32(v))
			}
		}
		if err := core.TensorSet(idx, raw, 0); err != nil {
			t.Fatal(err)
		}
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(out)
		err = be.GraphCompute(g)
		if bad >= 0 {
			// the CPU's words: "index 23 at [i1,i2,i3] of ..."
			want := fmt.Sprintf("at [%d,%d,%d]", bad%n, bad/n%ne2, bad/(n*ne2))
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: bad index %d: error %v, want one naming %s", name, ids[bad], err, want)
			}
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := core.GetFloat32s(out)
		if err != nil {
			t.Fatal(err)
		}
		wrong := 0
		for row := range int64(len(ids)) {
			i2, i3 := row/n%ne2, row/(n*ne2)
			s := ((i3*ne2+i2)*srcRows + ids[row]) * ne0
			for i0 := range ne0 {
				if g, w := got[row*ne0+i0], src[s+i0]; math.Float32bits(g) != math.Float32bits(w) {
					if wrong < 3 {
						t.Errorf("%s: dst row %d element %d: got %v, want %v", name, row, i0, g, w)
					}
					wrong++
				}
			}
		}
		if wrong > 0 {
			t.Errorf("%s: %d elements wrong", name, wrong)
		}
	}
	run("f32, parts of rows", core.TypeF32, core.TypeI32, 256, 20, 150, 3, 1, -1)
	run("q4_0, parts of two planes", core.TypeQ4_0, core.TypeI32, 256, 40, 30, 2, 2, -1)
	run("f32, bad index in a late part", core.TypeF32, core.TypeI32, 256, 20, 150, 3, 1, 2*150+100)
	run("f32 source of 120 KiB, result of 90 KiB", core.TypeF32, core.TypeI32, 256, 40, 30, 3, 1, -1)
	run("q4_0 source of 84 KiB", core.TypeQ4_0, core.TypeI32, 256, 200, 10, 3, 1, -1)
	run("mxfp4 source of 80 KiB (bytes), parts of rows", core.TypeMXFP4, core.TypeI32, 256, 200, 70, 3, 1, -1)
	run("q4_0 source of 84 KiB, bad index", core.TypeQ4_0, core.TypeI32, 256, 200, 10, 3, 1, 2*10+7)

	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	out := ctx.GetRows(ctx.NewTensor(core.TypeF16, 20000, 1), ctx.NewTensor(core.TypeI32, 5))
	if be.Device().SupportsOp(out) {
		t.Errorf("GET_ROWS with %d-byte result rows is supported under a 64 KiB binding", out.Nb[1])
	}
}
