package cpu

import "github.com/tandem-ml/tandem/core"

// OpTime is the time the backend spent in the nodes of one kind (core.OpTime): here the wall time
// from a node's start to the barrier after it.
type OpTime = core.OpTime

var _ core.OpProfiler = (*Backend)(nil)

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
		b.prof = &core.OpTimes{}
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
	return b.prof.Sorted()
}
