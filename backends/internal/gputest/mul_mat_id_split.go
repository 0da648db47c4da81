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

// MulMatIDSplit runs MUL_MAT_ID whose expert weights are larger than one storage binding on be,
// with the device's binding limit lowered to 64 KiB through limit (the backend's gpuops.Device
// field, restored at the end): 9 experts of f32 [64, 40] (10 KiB each: 6 a dispatch), 7 of q4_0
// [256, 96] (13.5 KiB each) and 5 of MXFP4 [256, 112] (addressed in bytes; 14.9 KiB each), 3 of 4
// experts used per token; each output compared with the product computed here from the weights
// as the device holds them, and a bad expert id reported at its own slot and token. Weights
// whose single expert exceeds the limit are not supported.
func MulMatIDSplit(t *testing.T, be core.Backend, limit *uint32) {
	t.Helper()
	old := *limit
	*limit = 64 << 10
	defer func() { *limit = old }()
	r := rand.New(rand.NewPCG(9, 32))

	run := func(name string, typ core.Type, k, m, experts, used, tokens int64, bad int64) {
		t.Helper()
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		as := ctx.NewTensor(typ, k, m, experts)
		b := ctx.NewTensor(core.TypeF32, k, 1, tokens)
		ids := ctx.NewTensor(core.TypeI32, used, tokens)
		out := ctx.MulMatID(as, b, ids)
		if !be.Device().SupportsOp(out) {
			t.Fatalf("%s: MUL_MAT_ID with %d bytes of weights not supported under a 64 KiB binding", name, as.NBytes())
		}
		AllocCtx(t, ctx, be.DefaultBufferType())
		wv := make([]float32, as.NElements())
		for i := range wv {
			wv[i] = 2*r.Float32() - 1
		}
		if err := core.SetFloat32s(as, wv); err != nil {
			t.Fatal(err)
		}
		w, err := core.GetFloat32s(as) // as the weights hold them (quantized)
		if err != nil {
			t.Fatal(err)
		}
		bv := make([]float32, b.NElements())
		for i := range bv {
			bv[i] = 2*r.Float32() - 1
		}
		if err := core.SetFloat32s(b, bv); err != nil {
			t.Fatal(err)
		}
		id := make([]int32, used*tokens)
		raw := make([]byte, 4*len(id))
		for tok := range tokens { // distinct experts per token, from all of them
			perm := r.Perm(int(experts))
			for s := range used {
				id[tok*used+s] = int32(perm[s])
			}
		}
		if bad >= 0 {
			id[bad] = int32(experts + 2)
		}
		for i, v := range id {
			binary.LittleEndian.PutUint32(raw[4*i:], uint32(v))
		}
		if err := core.TensorSet(ids, raw, 0); err != nil {
			t.Fatal(err)
		}
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(out)
		err = be.GraphCompute(g)
		if bad >= 0 {
			want := fmt.Sprintf("expert id %d at slot %d of token %d", experts+2, bad%used, bad/used)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: bad expert id %d at slot %d token %d: error %v", name, experts+2, bad%used, bad/used, err)
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
		for tok := range tokens {
			for s := range used {
				e := int64(id[tok*used+s])
				for row := range m {
					var want float64
					for i := range k {
						want += float64(w[(e*m+row)*k+i]) * float64(bv[tok*k+i])
					}
					g := got[(tok*used+s)*m+row]
					if math.Abs(float64(g)-want) > 1e-4*(1+math.Abs(want)) {
						if wrong < 3 {
							t.Errorf("%s: token %d slot %d (expert %d) row %d: got %v, want %v", name, tok, s, e, row, g, want)
						}
						wrong++
					}
				}
			}
		}
		if wrong > 0 {
			t.Errorf("%s: %d outputs wrong", name, wrong)
		}
	}
	run("f32, 9 experts", core.TypeF32, 64, 40, 9, 4, 5, -1)
	run("q4_0, 7 experts", core.TypeQ4_0, 256, 96, 7, 4, 3, -1)
	run("mxfp4, 5 experts (bytes)", core.TypeMXFP4, 256, 112, 5, 3, 4, -1)
	run("f32, bad id", core.TypeF32, 64, 40, 9, 4, 5, 2*4+3)

	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	out := ctx.MulMatID(ctx.NewTensor(core.TypeF32, 256, 80, 2), ctx.NewTensor(core.TypeF32, 256, 1, 2), ctx.NewTensor(core.TypeI32, 1, 2))
	if be.Device().SupportsOp(out) {
		t.Errorf("MUL_MAT_ID with 80 KiB experts is supported under a 64 KiB binding")
	}
}
