package tests

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// LIGHTNING_INDEXER after test-backend-ops' test_lightning_indexer (n_kv 1..65, 4 streams sharing
// one mask, every K type ggml tests that tandem has), at a smaller head size, plus strided sources.

func init() {
	extraCases = append(extraCases, lightningCases)
}

func lightningCases() []Case {
	var cs []Case
	f32 := core.TypeF32
	add := func(name string, build func(*core.Context) *core.Tensor) {
		cs = append(cs, Case{Name: "lightning/" + name, Build: build, Init: normInit(-1, 1)})
	}
	li := func(c *core.Context, typeK core.Type, hsk, nh, kv, nb, ns, nm int64) *core.Tensor {
		return c.LightningIndexer(c.NewTensor(f32, hsk, nh, nb, ns), c.NewTensor(typeK, hsk, 1, kv, ns),
			c.NewTensor(f32, nh, nb, 1, ns), c.NewTensor(core.TypeF16, kv, nb, 1, nm).SetName("mask"))
	}
	for _, kv := range []int64{1, 7, 65} {
		for _, typ := range []core.Type{core.TypeF32, core.TypeF16, core.TypeBF16, core.TypeQ8_0, core.TypeQ5_1,
			core.TypeQ5_0, core.TypeQ4_1, core.TypeQ4_0, core.TypeIQ4_NL} {
			add(fmt.Sprintf("LIGHTNING_INDEXER(k=%v,hsk=64,nh=8,kv=%d,nb=5,ns=4,nm=1)", typ, kv), func(c *core.Context) *core.Tensor {
				return li(c, typ, 64, 8, kv, 5, 4, 1)
			})
		}
	}
	add("LIGHTNING_INDEXER(ns=4,nm=4)", func(c *core.Context) *core.Tensor { return li(c, f32, 32, 3, 9, 2, 4, 4) })
	add("LIGHTNING_INDEXER(ns=4,nm=2)", func(c *core.Context) *core.Tensor { return li(c, core.TypeF16, 32, 3, 9, 2, 4, 2) })
	// Key types whose blocks are 256 elements (q4_K) or bytes apart (mxfp4); key rows of which the
	// GPU shader keeps only 3 in shared memory (4096 floats) and one longer than it holds.
	add("LIGHTNING_INDEXER(k=q4_K,hsk=256,nh=3,kv=5,nb=3,ns=2,nm=1)", func(c *core.Context) *core.Tensor {
		return li(c, core.TypeQ4_K, 256, 3, 5, 3, 2, 1)
	})
	add("LIGHTNING_INDEXER(k=mxfp4,hsk=64,nh=3,kv=5,nb=3,ns=2,nm=2)", func(c *core.Context) *core.Tensor {
		return li(c, core.TypeMXFP4, 64, 3, 5, 3, 2, 2)
	})
	add("LIGHTNING_INDEXER(k=f16,hsk=1056,nh=2,kv=3,nb=2,ns=1,nm=1)", func(c *core.Context) *core.Tensor {
		return li(c, core.TypeF16, 1056, 2, 3, 2, 1, 1)
	})
	add("LIGHTNING_INDEXER(k=q8_0,hsk=4160,nh=2,kv=3,nb=2,ns=1,nm=1)", func(c *core.Context) *core.Tensor {
		return li(c, core.TypeQ8_0, 4160, 2, 3, 2, 1, 1)
	})
	// More tokens than one GPU work item takes (64): three chunks of tokens, two tiles of keys.
	add("LIGHTNING_INDEXER(k=f16,hsk=32,nh=2,kv=40,nb=130,ns=2,nm=1)", func(c *core.Context) *core.Tensor {
		return li(c, core.TypeF16, 32, 2, 40, 130, 2, 1)
	})
	// 32 heads of 128 elements: 4096 dot-loop iterations a token, so a GPU work item takes 14
	// tokens on a software device (llvmpipe ends a loop after 65,535 iterations an invocation).
	add("LIGHTNING_INDEXER(k=f32,hsk=128,nh=32,kv=8,nb=20,ns=1,nm=1)", func(c *core.Context) *core.Tensor {
		return li(c, f32, 128, 32, 8, 20, 1, 1)
	})
	add("LIGHTNING_INDEXER(permuted q, strided k and weights)", func(c *core.Context) *core.Tensor {
		q := c.Permute(c.NewTensor(f32, 32, 3, 4, 2), 0, 2, 1, 3) // [32, 4, 3, 2]
		k := c.NewTensor(core.TypeF16, 40, 1, 6, 2)
		w := c.NewTensor(f32, 6, 3, 1, 2)
		return c.LightningIndexer(q, c.View4D(k, 32, 1, 6, 2, k.Nb[1], k.Nb[2], k.Nb[3], 0),
			c.View4D(w, 4, 3, 1, 2, w.Nb[1], w.Nb[2], w.Nb[3], 8), c.NewTensor(core.TypeF16, 6, 3, 1, 1).SetName("mask"))
	})
	return cs
}
