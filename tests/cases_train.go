package tests

import (
	"fmt"
	"math/rand/v2"

	"github.com/tandem-ml/tandem/core"
)

// Training ops (the *_BACK ops, the losses and the optimizer steps) on odd shapes, views and
// broadcast batches, against the CPU reference.

func init() {
	extraCases = append(extraCases, trainCases)
}

// trainInit fills tensors by name: "idx" row indices in [0, rows), "pos" positions, "v" second
// moments in [0, 1), "adamw" and "sgd" the optimizer parameters of a third step; everything else
// uniformly in [-1, 1).
func trainInit(rows float32) func(t *core.Tensor, r *rand.Rand) error {
	return func(t *core.Tensor, r *rand.Rand) error {
		switch t.Name {
		case "idx":
			return Uniform(t, r, 0, rows)
		case "pos":
			return Uniform(t, r, 0, 300)
		case "v":
			return Uniform(t, r, 0, 1)
		case "adamw":
			b1, b2 := float32(0.9), float32(0.999)
			b1h := 1 / (1 - b1*b1*b1)
			b2h := 1 / (1 - b2*b2*b2)
			return core.SetFloat32s(t, []float32{0.01, b1, b2, 1e-8, 0.1, b1h, b2h})
		case "sgd":
			return core.SetFloat32s(t, []float32{0.05, 0.01})
		}
		return Uniform(t, r, -1, 1)
	}
}

func trainCases() []Case {
	var cs []Case
	f32 := core.TypeF32
	add := func(name string, limit float64, rows float32, build func(*core.Context) *core.Tensor) {
		cs = append(cs, Case{Name: "train/" + name, Build: build, MaxNMSE: limit, Init: trainInit(rows)})
	}
	for _, ne := range [][]int64{{7, 5, 3}, {33, 4, 2, 2}} {
		ne := ne
		add(fmt.Sprintf("SILU_BACK%v", ne), 0, 0, func(c *core.Context) *core.Tensor {
			return c.SiluBack(c.NewTensor(f32, ne...), c.NewTensor(f32, ne...))
		})
		add(fmt.Sprintf("RMS_NORM_BACK%v", ne), 0, 0, func(c *core.Context) *core.Tensor {
			return c.RMSNormBack(c.NewTensor(f32, ne...), c.NewTensor(f32, ne...), 1e-6)
		})
		add(fmt.Sprintf("SOFT_MAX_BACK%v", ne), nmseSoftMax, 0, func(c *core.Context) *core.Tensor {
			y := c.SoftMax(c.NewTensor(f32, ne...))
			return c.SoftMaxExtBack(c.NewTensor(f32, ne...), y, 0.5, 0)
		})
		add(fmt.Sprintf("CROSS_ENTROPY_LOSS%v", ne), nmseSoftMax, 0, func(c *core.Context) *core.Tensor {
			return c.CrossEntropyLoss(c.NewTensor(f32, ne...), c.SoftMax(c.NewTensor(f32, ne...)))
		})
		add(fmt.Sprintf("CROSS_ENTROPY_LOSS_BACK%v", ne), nmseSoftMax, 0, func(c *core.Context) *core.Tensor {
			return c.CrossEntropyLossBack(c.NewTensor1D(f32, 1), c.NewTensor(f32, ne...), c.SoftMax(c.NewTensor(f32, ne...)))
		})
		add(fmt.Sprintf("OPT_STEP_ADAMW%v", ne), 0, 0, func(c *core.Context) *core.Tensor {
			return c.OptStepAdamW(c.NewTensor(f32, ne...), c.NewTensor(f32, ne...), c.NewTensor(f32, ne...),
				c.NewTensor(f32, ne...).SetName("v"), c.NewTensor1D(f32, core.AdamWNParams).SetName("adamw"))
		})
		add(fmt.Sprintf("OPT_STEP_SGD%v", ne), 0, 0, func(c *core.Context) *core.Tensor {
			return c.OptStepSGD(c.NewTensor(f32, ne...), c.NewTensor(f32, ne...), c.NewTensor1D(f32, core.SGDNParams).SetName("sgd"))
		})
		add(fmt.Sprintf("DIAG_MASK_ZERO%v", ne), 0, 0, func(c *core.Context) *core.Tensor {
			return c.DiagMaskZero(c.NewTensor(f32, ne...), 1)
		})
	}
	add("SILU_BACK(strided x)", 0, 0, func(c *core.Context) *core.Tensor {
		x := c.NewTensor(f32, 12, 5, 3)
		return c.SiluBack(c.NewTensor(f32, 8, 5, 3), c.View3D(x, 8, 5, 3, x.Nb[1], x.Nb[2], 4*x.Nb[0]))
	})
	add("GET_ROWS_BACK(repeated rows)", 0, 9, func(c *core.Context) *core.Tensor {
		return c.GetRowsBack(c.NewTensor(f32, 6, 20), c.NewTensor1D(core.TypeI32, 20).SetName("idx"), c.NewTensor(f32, 6, 9))
	})
	// test-backend-ops' GET_ROWS_BACK(v=1): a view of the first half of the indices with the whole
	// gradient; ggml reads only as many gradient rows as there are indices.
	add("GET_ROWS_BACK(index view, more gradient rows)", 0, 9, func(c *core.Context) *core.Tensor {
		idx := c.NewTensor(core.TypeI32, 20, 1).SetName("idx")
		return c.GetRowsBack(c.NewTensor(f32, 6, 20), c.View2D(idx, 10, 1, idx.Nb[1], 0), c.NewTensor(f32, 6, 9))
	})
	add("GET_ROWS_BACK(f16 gradient)", 0, 9, func(c *core.Context) *core.Tensor {
		return c.GetRowsBack(c.NewTensor(core.TypeF16, 7, 12), c.NewTensor1D(core.TypeI32, 12).SetName("idx"), c.NewTensor(f32, 7, 9))
	})
	for _, shapes := range [][2][]int64{{{6, 8, 3}, {6, 1, 3}}, {{10, 4, 2, 3}, {5, 2, 1, 3}}, {{9, 7}, {1, 1}}} {
		shapes := shapes
		add(fmt.Sprintf("REPEAT_BACK(%v→%v)", shapes[0], shapes[1]), 0, 0, func(c *core.Context) *core.Tensor {
			return c.RepeatBack(c.NewTensor(f32, shapes[0]...), c.NewTensor(f32, shapes[1]...))
		})
	}
	for _, mode := range []int{core.RopeNormal, core.RopeNeox} {
		mode := mode
		add(fmt.Sprintf("ROPE_BACK(mode=%d)", mode), 0, 0, func(c *core.Context) *core.Tensor {
			g := c.NewTensor(f32, 32, 3, 5)
			return c.RopeBack(g, c.NewTensor1D(core.TypeI32, 5).SetName("pos"), 32, mode)
		})
	}
	return cs
}
