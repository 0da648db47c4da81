package alloc

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// bigTransformer returns a transformer graph of at least n nodes (metadata only).
func bigTransformer(b testing.TB, n int) *core.Graph {
	p := tfParams{nEmbd: 4096, nHead: 32, nFF: 11008, nTokens: 512, nKV: 512, nLayers: 1}
	for {
		g, err := buildTransformer(p, &fakeBT{name: "weights", align: 32})
		if err != nil {
			b.Fatal(err)
		}
		if g.NNodes() >= n {
			return g
		}
		p.nLayers = p.nLayers*int64(n)/int64(g.NNodes()) + 1
	}
}

// Reserve + AllocGraph on a 5,000-node graph, per node (target: < 1 µs/node).
func BenchmarkReserveAllocGraph5000(b *testing.B) {
	g := bigTransformer(b, 5000)
	ga := NewGraphAllocator(&fakeBT{name: "compute", align: 32})
	b.ResetTimer()
	for b.Loop() {
		if err := ga.Reserve(g); err != nil {
			b.Fatal(err)
		}
		if err := ga.AllocGraph(g); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.NNodes()), "ns/node")
	b.ReportMetric(float64(g.NNodes()), "nodes")
}

// AllocGraph alone (plan reused after the fingerprint check), per node.
func BenchmarkAllocGraph5000(b *testing.B) {
	g := bigTransformer(b, 5000)
	ga := NewGraphAllocator(&fakeBT{name: "compute", align: 32})
	if err := ga.Reserve(g); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := ga.AllocGraph(g); err != nil {
			b.Fatal(err)
		}
	}
	if ga.Replans() != 1 {
		b.Fatalf("%d plans", ga.Replans())
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(g.NNodes()), "ns/node")
}

// Compute buffer size of a transformer layer (llama-7B shapes, 512 tokens) against the live-set
// lower bound and against ggml; with a 40 MiB maximum buffer size the plan needs two chunks.
func BenchmarkTransformerBufferRatio(b *testing.B) {
	g, err := buildTransformer(llama7B, &fakeBT{name: "weights", align: 32})
	if err != nil {
		b.Fatal(err)
	}
	for _, bt := range []*fakeBT{{name: "align32", align: 32}, {name: "max40MiB", align: 256, maxSize: 40 << 20}} {
		b.Run(bt.name, func(b *testing.B) {
			var st Stats
			for b.Loop() {
				ga := NewGraphAllocator(bt)
				if err := ga.Reserve(g); err != nil {
					b.Fatal(err)
				}
				st = ga.Stats()
			}
			ggml, _ := ggmlPlanSize(g, bt)
			b.ReportMetric(float64(st.Planned[0])/float64(st.LowerBound[0]), "size/lowerbound")
			b.ReportMetric(float64(st.Planned[0])/float64(ggml), "size/ggml")
			b.ReportMetric(float64(st.Planned[0])/(1<<20), "MiB")
		})
	}
}

// Random graphs: total planned bytes against the lower bound and ggml.
func BenchmarkRandomGraphsBufferRatio(b *testing.B) {
	bt := &fakeBT{name: "compute", align: 32}
	var graphs []*core.Graph
	for seed := uint64(1); seed <= 200; seed++ {
		graphs = append(graphs, genRandomGraph(seed, genOpts{nOps: 8 + int(seed%120)}).g)
	}
	var ours, lb, ggml float64
	for b.Loop() {
		ours, lb, ggml = 0, 0, 0
		for _, g := range graphs {
			ga := NewGraphAllocator(bt)
			if err := ga.Reserve(g); err != nil {
				b.Fatal(err)
			}
			st := ga.Stats()
			ours += float64(st.Planned[0])
			lb += float64(st.LowerBound[0])
		}
	}
	for _, g := range graphs {
		s, _ := ggmlPlanSize(g, bt)
		ggml += float64(s)
	}
	b.ReportMetric(ours/lb, "size/lowerbound")
	b.ReportMetric(ours/ggml, "size/ggml")
}
