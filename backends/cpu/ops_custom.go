package cpu

import "github.com/tandem-ml/tandem/core"

// MAP_CUSTOM1..3 and CUSTOM: the node's Go function, called once per task on the backend's
// workers in parallel with the task's index and the task count (ggml's ith, nth). The count is
// the node's (core.CustomTasks), at most the backend's threads; NTasksMax takes them all. A panic
// in the function is recovered like a kernel's and fails the compute with an error naming the node.

func init() {
	for _, op := range []core.Op{core.OpMapCustom1, core.OpMapCustom2, core.OpMapCustom3, core.OpCustom} {
		register(op, opImpl{compute: computeCustom, tasks: customTasks})
	}
}

func customTasks(dst *core.Tensor, nth int) int {
	n := core.CustomTasks(dst)
	if n == core.NTasksMax || n > nth {
		return nth
	}
	return max(n, 1)
}

func computeCustom(p *params, dst *core.Tensor) {
	if err := core.RunCustom(dst, p.ith, p.nth); err != nil {
		p.fail(err)
	}
}
