package alloc

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// quality compares one graph's plan with ggml's: ggml's placement, run by the package, must match
// the oracle exactly (when the oracle stays under ggml's 16 chunks), and the chosen plan must not be
// larger. It returns ours, ggml's, the lower bound of ggml's lifetimes, and the stats of our plan
// (whose LowerBound is that of the lifetimes it chose).
// lastCands holds the candidates' sizes of the last quality call (-1: not tried).
var lastCands [4]int64

func quality(t *testing.T, what string, g *core.Graph, bt core.BufferType) (int64, int64, int64, Stats) {
	t.Helper()
	want, nChunks := ggmlPlanSize(g, bt)
	ga := NewGraphAllocator(bt)
	sizes, err := ga.ReserveSizeN(g, nil, nil)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if nChunks < oMaxChunks && ga.cands[0].total != want {
		t.Fatalf("%s: ggml placement run by the package needs %d bytes, the ggml oracle %d", what, ga.cands[0].total, want)
	}
	if sizes[0] > want {
		t.Fatalf("%s: plan needs %d bytes, ggml %d", what, sizes[0], want)
	}
	lb := ga.lowerBound(&ga.sims[0], nil)[0]
	for k := range lastCands {
		lastCands[k] = -1
		if ga.candOK[k] {
			lastCands[k] = ga.cands[k].total
		}
	}
	if err := ga.Reserve(g); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if ga.BufferSize(0) != sizes[0] {
		t.Fatalf("%s: Reserve allocated %d bytes, ReserveSizeN said %d", what, ga.BufferSize(0), sizes[0])
	}
	if err := ga.AllocGraph(g); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := checkPlacement(g, ga); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return sizes[0], want, lb, ga.Stats()
}

// Quality on random graphs: never more than ggml's algorithm (best fit + tail-block rule + in-place
// rules, transcribed in oracle_test.go); the ratio to the live-set lower bound is reported.
func TestQualityRandomGraphs(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 100
	}
	for _, bt := range []*fakeBT{
		{name: "align32", align: 32},
		{name: "align256-max4K", align: 256, maxSize: 4096},
		{name: "align1", align: 1},
	} {
		var ours, ggml, lb, ourLB float64
		better, worse := 0, 0
		policies := map[string]int{}
		var abl [4]float64 // ggml only; ggml+offline; ggml+view; all
		for seed := uint64(1); seed <= uint64(n); seed++ {
			gg := genRandomGraph(seed, genOpts{nOps: 8 + int(seed%120)})
			o, w, l, st := quality(t, bt.name, gg.g, bt)
			ours += float64(o)
			ggml += float64(w)
			lb += float64(l)
			ourLB += float64(st.LowerBound[0])
			policies[st.Policy]++
			c := lastCands
			for k := range c {
				if c[k] < 0 {
					c[k] = 1 << 62
				}
			}
			abl[0] += float64(c[0])
			abl[1] += float64(min(c[0], c[1]))
			abl[2] += float64(min(c[0], c[2]))
			abl[3] += float64(min(c[0], c[1], c[2], c[3]))
			if o < w {
				better++
			} else if o > w {
				worse++
			}
		}
		t.Logf("%s: %d graphs: smaller than ggml on %d, larger on %d; total ours/ggml %.4f; ggml/its lower bound %.4f, ours/its lower bound %.4f (ggml's lifetimes' bound / ours %.4f); winners %v",
			bt.name, n, better, worse, ours/ggml, ggml/lb, ours/ourLB, lb/ourLB, policies)
		t.Logf("%s: what each candidate brings (total / ggml's): +offline %.4f, +view %.4f, all %.4f",
			bt.name, abl[1]/abl[0], abl[2]/abl[0], abl[3]/abl[0])
	}
}

// Quality on transformer layers (llama-7B shapes, 512 tokens).
func TestQualityTransformer(t *testing.T) {
	wbt := &fakeBT{name: "weights", align: 32}
	for _, tc := range []struct {
		p  tfParams
		bt *fakeBT
	}{
		{llama7B, &fakeBT{name: "cpu", align: 32}},
		{tfParams{nEmbd: 4096, nHead: 32, nFF: 11008, nTokens: 512, nKV: 512, nLayers: 4}, &fakeBT{name: "cpu", align: 32}},
		{tfParams{nEmbd: 4096, nHead: 32, nFF: 11008, nTokens: 1, nKV: 4096, nLayers: 2}, &fakeBT{name: "vk", align: 256}},
		{llama7B, &fakeBT{name: "vk-max40M", align: 256, maxSize: 40 << 20}},
	} {
		g, err := buildTransformer(tc.p, wbt)
		if err != nil {
			t.Fatal(err)
		}
		ours, ggml, lb, st := quality(t, "transformer", g, tc.bt)
		t.Logf("%d layer(s), %d tokens, %s: %d nodes, %.2f MiB (%s, %d chunks), ggml %.2f MiB, lower bound %.2f MiB: ours/lb %.4f, ggml/lb %.4f",
			tc.p.nLayers, tc.p.nTokens, tc.bt.name, g.NNodes(), mb(ours), st.Policy, st.Chunks[0], mb(ggml), mb(lb),
			float64(ours)/float64(st.LowerBound[0]), float64(ggml)/float64(lb))
	}
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }
