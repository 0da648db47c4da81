package cpu

import (
	"slices"
	"time"

	"github.com/tandem-ml/tandem/core"
)

// OpTime is the time a backend spent in the nodes of one kind, from SetOpProfile(true) on.
type OpTime struct {
	// Op names the kind: the op, and for MUL_MAT, MUL_MAT_ID and GET_ROWS the type of src0
	// ("MUL_MAT q4_0"), with "1-row" added for one activation row (a mat-vec).
	Op    string
	Nodes int           // nodes run
	Time  time.Duration // wall time from a node's start to the barrier after it, summed
}

// opProfile accumulates OpTimes; only worker 0 writes it, during a run.
type opProfile struct {
	idx   map[opKey]int
	times []OpTime
}

type opKey struct {
	op  core.Op
	typ core.Type // src0's type for the ops named with it (typed), else 0
	vec bool
}

// typed reports whether op's profile entries are kept per src0 type.
func typed(op core.Op) bool {
	return op == core.OpMulMat || op == core.OpMulMatID || op == core.OpGetRows
}

func (p *opProfile) add(n *core.Tensor, d time.Duration) {
	k := opKey{op: n.Op}
	if typed(n.Op) {
		k.typ = n.Src[0].Type
		k.vec = n.Op != core.OpGetRows && n.Src[1] != nil && n.Src[1].Ne[1]*n.Src[1].Ne[2]*n.Src[1].Ne[3] == 1
	}
	i, ok := p.idx[k]
	if !ok {
		name := n.Op.String()
		if typed(k.op) {
			name += " " + k.typ.String()
		}
		if k.vec {
			name += " 1-row"
		}
		i = len(p.times)
		p.idx[k] = i
		p.times = append(p.times, OpTime{Op: name})
	}
	p.times[i].Nodes++
	p.times[i].Time += d
}

// SetOpProfile turns the per-op profile on (clearing what it held) or off. While it is on,
// worker 0 reads the clock twice per node, which costs well under a microsecond a node.
func (b *Backend) SetOpProfile(on bool) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.prof = nil
	if on {
		b.prof = &opProfile{idx: map[opKey]int{}}
	}
}

// OpProfile returns the time spent per kind of node since SetOpProfile(true), the most costly
// first; nil when the profile is off.
func (b *Backend) OpProfile() []OpTime {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.prof == nil {
		return nil
	}
	out := slices.Clone(b.prof.times)
	slices.SortStableFunc(out, func(x, y OpTime) int { return int(y.Time - x.Time) })
	return out
}
