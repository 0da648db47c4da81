package tests

import (
	"fmt"
	"math/rand/v2"

	"github.com/tandem-ml/tandem/core"
)

// DeepSeek V4's hyper-connection ops (DSV4_HC_COMB, DSV4_HC_PRE, DSV4_HC_POST) after
// test-backend-ops' test_dsv4_hc_* (its shapes, n_iter and input ranges), plus strided sources,
// which ggml's kernels read at their strides.

func init() {
	extraCases = append(extraCases, dsv4Cases)
}

// dsv4Init draws each input in test-backend-ops' range for its name.
func dsv4Init(t *core.Tensor, r *rand.Rand) error {
	lo, hi := float32(-1), float32(1)
	switch t.Name {
	case "mixes":
		lo, hi = -2, 2
	case "scale":
		lo, hi = -0.5, 0.5
	case "base":
		lo, hi = -0.25, 0.25
	case "weights", "comb":
		lo, hi = 0, 1
	case "post":
		lo, hi = 0, 2
	}
	return Uniform(t, r, lo, hi)
}

func dsv4Cases() []Case {
	var cs []Case
	f32 := core.TypeF32
	const hc = core.Dsv4HC
	add := func(name string, build func(*core.Context) *core.Tensor) {
		cs = append(cs, Case{Name: "dsv4/" + name, Build: build, Init: dsv4Init})
	}
	comb := func(c *core.Context, nt int64, nIter int, eps float32) *core.Tensor {
		return c.Dsv4HcComb(c.NewTensor(f32, (2+hc)*hc, nt).SetName("mixes"), c.NewTensor(f32, 3).SetName("scale"),
			c.NewTensor(f32, (2+hc)*hc).SetName("base"), eps, nIter)
	}
	for _, p := range []struct {
		nt    int64
		nIter int
	}{{1, 1}, {17, 4}, {17, 20}, {5, 2}} {
		add(fmt.Sprintf("DSV4_HC_COMB(n_tokens=%d,n_iter=%d)", p.nt, p.nIter), func(c *core.Context) *core.Tensor {
			return comb(c, p.nt, p.nIter, 1e-6)
		})
	}
	add("DSV4_HC_COMB(eps=0.1)", func(c *core.Context) *core.Tensor { return comb(c, 3, 3, 0.1) })
	add("DSV4_HC_COMB(strided mixes, scale of 5)", func(c *core.Context) *core.Tensor {
		m := c.NewTensor(f32, 30, 7).SetName("mixes")
		return c.Dsv4HcComb(c.View2D(m, (2+hc)*hc, 7, m.Nb[1], 8), c.NewTensor(f32, 5).SetName("scale"),
			c.NewTensor(f32, (2+hc)*hc).SetName("base"), 1e-6, 4)
	})
	for _, s := range [][2]int64{{1, 1}, {31, 17}, {128, 9}} {
		add(fmt.Sprintf("DSV4_HC_PRE(n_embd=%d,n_tokens=%d)", s[0], s[1]), func(c *core.Context) *core.Tensor {
			return c.Dsv4HcPre(c.NewTensor(f32, s[0], hc, s[1]).SetName("x"), c.NewTensor(f32, hc, s[1]).SetName("weights"))
		})
		add(fmt.Sprintf("DSV4_HC_POST(n_embd=%d,n_tokens=%d)", s[0], s[1]), func(c *core.Context) *core.Tensor {
			return c.Dsv4HcPost(c.NewTensor(f32, s[0], s[1]).SetName("x"), c.NewTensor(f32, s[0], hc, s[1]).SetName("residual"),
				c.NewTensor(f32, hc, s[1]).SetName("post"), c.NewTensor(f32, hc, hc, s[1]).SetName("comb"))
		})
	}
	add("DSV4_HC_PRE(hc=3, permuted x, transposed weights)", func(c *core.Context) *core.Tensor {
		x := c.Permute(c.NewTensor(f32, 9, 5, 3).SetName("x"), 0, 2, 1, 3) // [9, 3, 5]
		return c.Dsv4HcPre(x, c.Transpose(c.NewTensor(f32, 5, 3).SetName("weights")))
	})
	add("DSV4_HC_POST(hc=2, strided sources)", func(c *core.Context) *core.Tensor {
		x := c.NewTensor(f32, 12, 6).SetName("x")
		res := c.Permute(c.NewTensor(f32, 10, 6, 2).SetName("residual"), 0, 2, 1, 3) // [10, 2, 6]
		cb := c.Permute(c.NewTensor(f32, 2, 2, 6).SetName("comb"), 1, 0, 2, 3)
		return c.Dsv4HcPost(c.View2D(x, 10, 6, x.Nb[1], 4), res, c.Transpose(c.NewTensor(f32, 6, 2).SetName("post")), cb)
	})
	return cs
}
