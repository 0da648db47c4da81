package scheduler

import "github.com/tandem-ml/tandem/core"

// Probe returns how many times s looked at a user graph (fingerprints taken or compared) and how
// many times its graph allocator analyzed an allocation graph.
func Probe(s *Scheduler) (fingerprints, analyses int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.probe.fingerprints, s.probe.analyses
}

// PlacedIn returns where the current plan's allocation put t by the graph allocator's report: the
// buffer, the buffer id (-1 for a view) and whether it was placed at all.
func PlacedIn(s *Scheduler, t *core.Tensor) (buf core.Buffer, id int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.plan == nil {
		return nil, 0, false
	}
	for _, pl := range s.plan.placed {
		if pl.Tensor == t {
			return pl.Buffer, pl.BufferID, true
		}
	}
	return nil, 0, false
}

// RunsItself reports whether the current plan computes the user node t itself (false: a shadow
// of it, or t is not a node of the plan).
func RunsItself(s *Scheduler, t *core.Tensor) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.plan == nil {
		return false
	}
	for _, sp := range s.plan.splits {
		for k, u := range sp.users {
			if u == t {
				return sp.nodes[k] == t
			}
		}
	}
	return false
}
