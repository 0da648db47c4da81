package scheduler

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// assigner runs ggml's assignment passes over a user graph. Assignments are keyed by the user's
// tensors; -1 (absent) means unassigned.
type assigner struct {
	s      *Scheduler
	g      *core.Graph
	assign map[*core.Tensor]int
	cause  map[*core.Tensor]string // why each tensor went where it went (Dump's reason column)
}

func (a *assigner) get(t *core.Tensor) int {
	if id, ok := a.assign[t]; ok {
		return id
	}
	return -1
}

func (a *assigner) set(t *core.Tensor, id int, cause string) {
	a.assign[t] = id
	a.cause[t] = cause
}

func (a *assigner) supportsOp(id int, t *core.Tensor) bool {
	return a.s.backends[id].Device().SupportsOp(t)
}

func (a *assigner) supportsBuft(id int, bt core.BufferType) bool {
	return a.s.backends[id].Device().SupportsBufferType(bt)
}

// bufferOf is the buffer t's memory lives in (its own or its view source's), if any.
func bufferOf(t *core.Tensor) core.Buffer {
	if t.Buffer != nil {
		return t.Buffer
	}
	if t.ViewSrc != nil {
		return t.ViewSrc.Buffer
	}
	return nil
}

// fromBuffer is the highest-priority backend that can use bt and run t, or -1.
func (a *assigner) fromBuffer(bt core.BufferType, t *core.Tensor) int {
	for id := range a.s.backends {
		if a.supportsBuft(id, bt) && a.supportsOp(id, t) {
			return id
		}
	}
	return -1
}

// fromCur is pass 1 for one tensor: pre-allocated memory, input flag, weights.
func (a *assigner) fromCur(t *core.Tensor) (int, string, error) {
	if t.Buffer != nil {
		id := a.fromBuffer(t.Buffer.Type(), t)
		if id < 0 {
			return -1, "", fmt.Errorf("tandem: scheduler: %v lives in a %s buffer, and no backend that can use it runs %v",
				t, t.Buffer.Type().Name(), t.Op)
		}
		return id, "pass 1: its memory is in this backend's buffer", nil
	}
	if t.ViewSrc != nil && t.ViewSrc.Buffer != nil {
		id := a.fromBuffer(t.ViewSrc.Buffer.Type(), t)
		if id < 0 {
			return -1, "", fmt.Errorf("tandem: scheduler: %v views a %s buffer, and no backend that can use it runs %v",
				t, t.ViewSrc.Buffer.Type().Name(), t.Op)
		}
		return id, "pass 1: views memory in this backend's buffer", nil
	}
	if t.Flags&core.FlagInput != 0 {
		return len(a.s.backends) - 1, "pass 1: graph input (starts on the CPU)", nil
	}
	if t.Op == core.OpRope {
		return -1, "", nil // its small freq-factor weights must not decide placement
	}
	for _, src := range t.Src {
		if src == nil {
			continue
		}
		buf := bufferOf(src)
		if buf == nil || buf.Usage() != core.BufferUsageWeights {
			continue
		}
		id := a.fromBuffer(buf.Type(), t)
		cpu := len(a.s.backends) - 1
		if id == cpu && buf.Type().IsHost() && a.s.opts.OpOffload {
			for b := 0; b < cpu; b++ {
				dev := a.s.backends[b].Device()
				if dev.SupportsOp(t) && dev.OffloadOp(t) {
					return b, "pass 1: host weights, op offloaded", nil
				}
			}
		}
		return id, "pass 1: its weights live here", nil // the first weight decides
	}
	return -1, "", nil
}

// run assigns every leaf and node of the graph.
func (a *assigner) run() error {
	s := a.s
	nodes, leafs := a.g.Nodes(), a.g.Leafs()
	cpu := len(s.backends) - 1

	// Pass 1: user pins, then pre-allocated memory, inputs and weights.
	for _, list := range [][]*core.Tensor{leafs, nodes} {
		for _, t := range list {
			if id, ok := s.pins[t]; ok {
				if t.Op != core.OpNone && !a.supportsOp(id, t) {
					return fmt.Errorf("tandem: scheduler: %v is pinned to %s, which cannot run %v", t, s.backends[id].Name(), t.Op)
				}
				a.set(t, id, "pinned by SetTensorBackend")
				continue
			}
			id, cause, err := a.fromCur(t)
			if err != nil {
				return err
			}
			if id >= 0 {
				a.set(t, id, cause)
			}
		}
	}

	// Pass 2: expand GPU assignments down and up, then any assignment down and up.
	expand := func(reverse, skipCPU bool) {
		cur := -1
		for k := range nodes {
			i := k
			if reverse {
				i = len(nodes) - 1 - k
			}
			n := nodes[i]
			if n.Op.IsView() {
				continue
			}
			if id := a.get(n); id >= 0 {
				if skipCPU && id == cpu {
					cur = -1
				} else {
					cur = id
				}
			} else if cur >= 0 && a.supportsOp(cur, n) {
				a.set(n, cur, "pass 2: next to a neighbour on this backend")
			}
		}
	}
	expand(false, true)
	expand(true, true)
	expand(false, false)
	expand(true, false)

	// Pass 3: leftovers go where most of their sources can be read; assigned nodes move up to a
	// higher-priority backend with the same buffer type when it can run them.
	for _, n := range nodes {
		if n.Op.IsView() {
			continue
		}
		id := a.get(n)
		if id < 0 {
			best, bestN := -1, -1
			for b := range s.backends {
				if !a.supportsOp(b, n) {
					continue
				}
				cnt := 0
				for _, src := range n.Src {
					if src == nil {
						continue
					}
					if (a.get(src) >= 0 || (src.ViewSrc != nil && a.get(src.ViewSrc) >= 0)) && a.bufferSupported(src, b) {
						cnt++
					}
				}
				if cnt > bestN {
					best, bestN = b, cnt
				}
			}
			if best >= 0 {
				a.set(n, best, "pass 3: highest-priority backend for its sources")
			}
			continue
		}
		if _, pinned := s.pins[n]; pinned {
			continue
		}
		for b := 0; b < id; b++ {
			if s.bufts[b] != s.bufts[id] || !a.supportsOp(b, n) {
				continue
			}
			ok := true
			for _, src := range n.Src {
				if src != nil && !a.bufferSupported(src, b) {
					ok = false
					break
				}
			}
			if ok {
				a.set(n, b, "pass 3: upgraded to a higher-priority backend")
				break
			}
		}
	}

	// Pass 4: views follow their source, unassigned sources follow their view source or consumer.
	for _, n := range nodes {
		if n.ViewSrc != nil && a.get(n) < 0 {
			if id := a.get(n.ViewSrc); id >= 0 {
				a.set(n, id, "pass 4: follows its view source")
			}
		}
		cur := a.get(n)
		for _, src := range n.Src {
			if src == nil || a.get(src) >= 0 {
				continue
			}
			if src.ViewSrc != nil {
				if id := a.get(src.ViewSrc); id >= 0 {
					a.set(src, id, "pass 4: follows its view source")
					continue
				}
			}
			if cur >= 0 {
				a.set(src, cur, "pass 4: source placed with its consumer")
			}
		}
		if a.get(n) < 0 {
			for b := range s.backends {
				if a.supportsOp(b, n) {
					a.set(n, b, "pass 4: first backend that supports it")
					break
				}
			}
		}
		if a.get(n) < 0 {
			return fmt.Errorf("tandem: scheduler: no backend supports node %v (op %v); backends: %s", n, n.Op, s.backendNames())
		}
		for _, src := range n.Src {
			if src != nil && a.get(src) < 0 {
				a.set(src, cpu, "pass 4: nothing else: CPU")
			}
		}
	}
	for _, l := range leafs {
		if a.get(l) < 0 {
			a.set(l, cpu, "pass 4: nothing else: CPU")
		}
	}
	return nil
}

// bufferSupported reports whether backend id can read t where it lives (or will live).
func (a *assigner) bufferSupported(t *core.Tensor, id int) bool {
	var bt core.BufferType
	if buf := bufferOf(t); buf != nil {
		bt = buf.Type()
	} else if b := a.get(t); b >= 0 {
		bt = a.s.bufts[b]
	} else if t.ViewSrc != nil {
		if b := a.get(t.ViewSrc); b >= 0 {
			bt = a.s.bufts[b]
		}
	}
	return bt != nil && a.supportsBuft(id, bt)
}

func (s *Scheduler) backendNames() string {
	out := ""
	for i, b := range s.backends {
		if i > 0 {
			out += ", "
		}
		out += b.Name()
	}
	return out
}
