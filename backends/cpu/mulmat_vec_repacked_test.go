package cpu_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// TestRepackMatVecNonFinite: the one-row MUL_MAT on repacked weights (prepared by every worker,
// non-finite outputs fixed by the worker that computed them) gives, with 1, 2 and 3 workers,
// the same outputs bit for bit whatever the team, and the outputs of the same weights in standard
// memory: finite ones to float32 rounding (the sums run in another order), and the non-finite ones
// made by an infinite activation or a weight block with an infinite scale exactly, by the same
// float32 rule.
func TestRepackMatVecNonFinite(t *testing.T) {
	for _, typ := range repackTypes {
		for _, c := range []struct {
			k, m     int64
			infAct   bool
			infScale bool
		}{{256, 40, false, false}, {2560, 33, false, false}, {256, 40, true, false}, {96, 17, false, true}, {2560, 50, false, true}} {
			c.k = repackK(typ, c.k)
			t.Run(fmt.Sprint(typ, c), func(t *testing.T) {
				raw := quantBytes(t, typ, c.k*c.m, uint64(c.k+c.m))
				if c.infScale {
					raw[typ.RowSize(c.k)*3] = 0x00 // row 3's first block: scale +Inf
					raw[typ.RowSize(c.k)*3+1] = 0x7c
				}
				x := randF32(c.k, 9)
				if c.infAct {
					x[37] = float32(math.Inf(-1))
				}
				want := map[bool][]float32{}
				for _, th := range []int{1, 2, 3} {
					be, err := cpu.New(cpu.Options{Threads: th})
					if err != nil {
						t.Fatal(err)
					}
					for _, extra := range []bool{false, true} {
						ctx := core.NewContext(core.ContextParams{NoAlloc: true})
						w := ctx.NewTensor2D(typ, c.k, c.m)
						xt := ctx.NewTensor2D(core.TypeF32, c.k, 1)
						y := ctx.MulMat(w, xt)
						buf, err := alloc.AllocCtxTensorsWithOptions(ctx, be.DefaultBufferType(), alloc.CtxAllocOptions{NoExtraBufferTypes: !extra})
						if err != nil {
							t.Fatal(err)
						}
						if got := w.Buffer.Type().Name(); (got == cpu.RepackBufferTypeName) != (extra && repackPlaced(typ) == cpu.RepackBufferTypeName) {
							t.Fatalf("weights in %s with extra buffer types %v", got, extra)
						}
						if err := core.TensorSet(w, raw, 0); err != nil {
							t.Fatal(err)
						}
						if err := core.SetFloat32s(xt, x); err != nil {
							t.Fatal(err)
						}
						got := computeOn(t, be, y)
						buf.Free()
						nonFinite := 0
						for _, v := range got {
							if v-v != 0 {
								nonFinite++
							}
						}
						if (nonFinite > 0) != (c.infAct || c.infScale) {
							t.Fatalf("%d threads, repacked %v: %d non-finite outputs", th, extra, nonFinite)
						}
						if want[extra] == nil {
							want[extra] = got
						}
						for i, w := range want[extra] {
							if math.Float32bits(got[i]) != math.Float32bits(w) && !(got[i] != got[i] && w != w) {
								t.Fatalf("%d threads, repacked %v: output %d is %v, one thread %v", th, extra, i, got[i], w)
							}
						}
						if p := want[false]; extra && p != nil {
							for i, v := range got {
								same := v == p[i] || (v != v && p[i] != p[i])
								if p[i]-p[i] == 0 && v-v == 0 {
									same = math.Abs(float64(v-p[i])) <= 1e-5*(1+math.Abs(float64(p[i])))
								}
								if !same {
									t.Fatalf("%d threads: output %d is %v repacked, %v in standard memory", th, i, v, p[i])
								}
							}
						}
					}
					be.Close()
				}
			})
		}
	}
}
