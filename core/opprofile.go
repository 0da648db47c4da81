package core

import (
	"slices"
	"time"
)

// OpTime is the time a backend spent in the nodes of one kind while its op profile was on.
type OpTime struct {
	// Op names the kind: the op, and for MUL_MAT, MUL_MAT_ID and GET_ROWS the type of src0
	// ("MUL_MAT q4_0"), with "1-row" added for one activation row (a mat-vec).
	Op    string
	Nodes int           // nodes run
	Time  time.Duration // the nodes' time, summed (each backend says what it measures)
}

// OpProfiler is a backend that can time its nodes per kind (OpTime): the CPU backend by the wall
// clock of each node, the Vulkan backend by the device's timestamps.
type OpProfiler interface {
	// SetOpProfile turns the profile on (clearing what it held) or off.
	SetOpProfile(on bool)
	// OpProfile returns the time per kind of node since SetOpProfile(true), the most costly
	// first; nil while the profile is off.
	OpProfile() []OpTime
}

// OpTimes accumulates OpTimes per kind of node for an OpProfiler. The zero value is ready to use;
// it is not safe for concurrent use.
type OpTimes struct {
	idx   map[opTimeKey]int
	times []OpTime
}

type opTimeKey struct {
	op  Op
	typ Type // src0's type for the ops named with it, else 0
	vec bool
}

// profiledByType reports whether op's entries are kept per src0 type.
func profiledByType(op Op) bool {
	return op == OpMulMat || op == OpMulMatID || op == OpGetRows
}

// Add counts node n as run for d; on a nil *OpTimes (a profile that is off) it does nothing.
func (p *OpTimes) Add(n *Tensor, d time.Duration) {
	if p == nil || n == nil {
		return
	}
	k := opTimeKey{op: n.Op}
	if profiledByType(n.Op) && n.Src[0] != nil {
		k.typ = n.Src[0].Type
		k.vec = n.Op != OpGetRows && n.Src[1] != nil && n.Src[1].Ne[1]*n.Src[1].Ne[2]*n.Src[1].Ne[3] == 1
	}
	if p.idx == nil {
		p.idx = map[opTimeKey]int{}
	}
	i, ok := p.idx[k]
	if !ok {
		name := n.Op.String()
		if profiledByType(k.op) && n.Src[0] != nil {
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

// Sorted returns a copy of the accumulated times, the most costly first; nil for a nil *OpTimes.
func (p *OpTimes) Sorted() []OpTime {
	if p == nil {
		return nil
	}
	out := slices.Clone(p.times)
	slices.SortStableFunc(out, func(x, y OpTime) int { return int(y.Time - x.Time) })
	return out
}
