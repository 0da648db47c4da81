package scheduler

import "github.com/tandem-ml/tandem/core"

// nodeRecord is what a plan depends on for one node or leaf.
type nodeRecord struct {
	t      *core.Tensor
	op     core.Op
	typ    core.Type
	ne, nb [4]int64
	params [core.MaxOpParams]int32
	src    [core.MaxSrc]*core.Tensor
	view   *core.Tensor
	flags  core.Flags
	buf    core.Buffer // leafs: where the data lives (a moved weight changes the plan)
}

// fingerprint is a copy of everything in a graph that a plan depends on, leaf memory included
// (pins invalidate the plan themselves, in SetTensorBackend). Two graphs with the same
// fingerprint get the same plan, so a changed graph behind the same node count is always re-planned.
type fingerprint struct {
	nodes, leafs []nodeRecord
}

func record(t *core.Tensor, withBuf bool) nodeRecord {
	r := nodeRecord{t: t, op: t.Op, typ: t.Type, ne: t.Ne, nb: t.Nb, params: t.Params, src: t.Src, view: t.ViewSrc, flags: t.Flags}
	if withBuf {
		r.buf = t.Buffer
	}
	return r
}

// takeFingerprint records g for a new plan; it counts as the run's one look at the graph.
func (s *Scheduler) takeFingerprint(g *core.Graph) fingerprint {
	s.probe.fingerprints++
	fp := fingerprint{nodes: make([]nodeRecord, g.NNodes()), leafs: make([]nodeRecord, len(g.Leafs()))}
	for i, n := range g.Nodes() {
		fp.nodes[i] = record(n, false)
	}
	for i, l := range g.Leafs() {
		fp.leafs[i] = record(l, true)
	}
	return fp
}

// matches reports whether g is the graph fp was taken from, with the leaf memory the plan's
// allocation gave (setPlaced).
func (s *Scheduler) matches(fp *fingerprint, g *core.Graph) bool {
	s.probe.fingerprints++
	nodes, leafs := g.Nodes(), g.Leafs()
	if len(nodes) != len(fp.nodes) || len(leafs) != len(fp.leafs) {
		return false
	}
	for i, n := range nodes {
		if !fp.nodes[i].is(n, false) {
			return false
		}
	}
	for i, l := range leafs {
		if !fp.leafs[i].is(l, true) {
			return false
		}
	}
	return true
}

// is reports whether r == record(t, withBuf), field by field without building the record.
func (r *nodeRecord) is(t *core.Tensor, withBuf bool) bool {
	if r.t != t || r.op != t.Op || r.typ != t.Type || r.ne != t.Ne || r.nb != t.Nb || r.params != t.Params ||
		r.src != t.Src || r.view != t.ViewSrc || r.flags != t.Flags {
		return false
	}
	if withBuf {
		return r.buf == t.Buffer
	}
	return r.buf == nil
}

// setPlaced records where the leafs of g live once the plan's allocation placed them, so that the
// next run's graph matches only with the same memory (a leaf the user moves since is re-planned).
func (fp *fingerprint) setPlaced(g *core.Graph) {
	for i, l := range g.Leafs() {
		fp.leafs[i].buf = l.Buffer
	}
}
