package tests

import "github.com/tandem-ml/tandem/core"

// Rows and recurrences longer than 65,535 steps of one shader invocation (llvmpipe, the software
// Vulkan and GL driver, ends an invocation's loops there): CUMSUM and L2_NORM over rows of 70,000,
// CROSS_ENTROPY_LOSS and its gradient over rows of 30,000 logits (three passes each), as
// test-backend-ops runs them (SSM_SCAN's state of 128 over 512 tokens is in cases_ssm.go). The
// GPU shaders spread each row over a workgroup.

func init() {
	extraCases = append(extraCases, longRowCases)
}

func longRowCases() []Case {
	f32 := core.TypeF32
	return []Case{
		{Name: "long/CUMSUM[70000,2]", Build: func(c *core.Context) *core.Tensor {
			return c.Cumsum(c.NewTensor(f32, 70000, 2))
		}},
		{Name: "long/L2_NORM[70000,2]", Build: func(c *core.Context) *core.Tensor {
			return c.L2Norm(c.NewTensor(f32, 70000, 2), 1e-12)
		}},
		{Name: "long/CROSS_ENTROPY_LOSS[30000,2]", MaxNMSE: nmseSoftMax, Build: func(c *core.Context) *core.Tensor {
			return c.CrossEntropyLoss(c.NewTensor(f32, 30000, 2), c.SoftMax(c.NewTensor(f32, 30000, 2)))
		}},
		{Name: "long/CROSS_ENTROPY_LOSS_BACK[30000,2]", MaxNMSE: nmseSoftMax, Build: func(c *core.Context) *core.Tensor {
			return c.CrossEntropyLossBack(c.NewTensor1D(f32, 1), c.NewTensor(f32, 30000, 2), c.SoftMax(c.NewTensor(f32, 30000, 2)))
		}},
	}
}
