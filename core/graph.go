package core

import (
	"errors"
	"fmt"
	"slices"
)

func isNilTensor(t *Tensor) bool { return t == nil }

// DefaultGraphSize is the node capacity of a graph made with NewGraph(DefaultGraphSize).
const DefaultGraphSize = 2048

// Graph is a compute graph: nodes in execution order (sources before users) and leafs (tensors with
// no op that are not parameters). A graph view shares its parent's tensors over a node range.
type Graph struct {
	size      int
	nodes     []*Tensor
	leafs     []*Tensor
	visited   map[*Tensor]struct{}
	useCounts map[*Tensor]int
	err       error

	// set by BuildBackward
	grads    map[*Tensor]*Tensor
	gradAccs map[*Tensor]*Tensor
	accList  []*Tensor
}

// NewGraph creates an empty graph that holds at most size nodes and size leafs.
func NewGraph(size int) *Graph {
	if size <= 0 {
		size = DefaultGraphSize
	}
	return &Graph{size: size, visited: map[*Tensor]struct{}{}, useCounts: map[*Tensor]int{}}
}

// ErrNilGraph is returned for a nil *Graph.
var ErrNilGraph = errors.New("tandem: nil graph")

// Err returns the first error met while building the graph, including construction errors of the
// contexts its tensors came from (ErrNilGraph for a nil g).
func (g *Graph) Err() error {
	if g == nil {
		return ErrNilGraph
	}
	return g.err
}

// Size is the graph's capacity (0 for a nil g).
func (g *Graph) Size() int {
	if g == nil {
		return 0
	}
	return g.size
}

// Nodes returns the nodes in execution order (nil for a nil g).
func (g *Graph) Nodes() []*Tensor {
	if g == nil {
		return nil
	}
	return g.nodes
}

// Leafs returns the leafs in discovery order (nil for a nil g).
func (g *Graph) Leafs() []*Tensor {
	if g == nil {
		return nil
	}
	return g.leafs
}

// NNodes is len(Nodes()) (0 for a nil g).
func (g *Graph) NNodes() int { return len(g.Nodes()) }

// Node returns node i; negative i counts from the end (-1 is the last node). Out of range (or a nil
// g) gives nil.
func (g *Graph) Node(i int) *Tensor {
	if g == nil {
		return nil
	}
	if i < 0 {
		i += len(g.nodes)
	}
	if i < 0 || i >= len(g.nodes) {
		return nil
	}
	return g.nodes[i]
}

// UseCount is the number of times t is a source of a node in the graph (0 for a nil g or t).
func (g *Graph) UseCount(t *Tensor) int {
	if g == nil {
		return 0
	}
	return g.useCounts[t]
}

// Contains reports whether t was visited by BuildForwardExpand (false for a nil g or t).
func (g *Graph) Contains(t *Tensor) bool {
	if g == nil || t == nil {
		return false
	}
	_, ok := g.visited[t]
	return ok
}

// BuildForwardExpand adds t and everything it depends on, depth first in post-order (sources before
// users, left to right), skipping tensors already in the graph. Errors (a full graph, a construction
// error in t's context or a placeholder left by a failed op) are kept in Err; a nil t is such an
// error, a nil g does nothing (its Err is ErrNilGraph).
func (g *Graph) BuildForwardExpand(t *Tensor) {
	if g == nil {
		return
	}
	if g.visited == nil {
		g.visited, g.useCounts = map[*Tensor]struct{}{}, map[*Tensor]int{}
	}
	if g.size == 0 && len(g.nodes) == 0 && len(g.leafs) == 0 {
		g.size = DefaultGraphSize // a zero Graph works as NewGraph(DefaultGraphSize)
	}
	if g.err != nil {
		return
	}
	if t == nil {
		g.err = fmt.Errorf("tandem: BuildForwardExpand: nil tensor")
		return
	}
	if t.ctx != nil {
		if err := t.ctx.Err(); err != nil {
			g.err = err
			return
		}
	}
	g.visit(t, map[*Tensor]bool{})
}

// visit adds t's sources, then t. onPath holds the tensors whose sources are being visited: meeting
// one again means a source chain leads back to it (a Src edited by hand into a cycle), which no
// order of execution can compute, so it is an error naming the tensor.
func (g *Graph) visit(t *Tensor, onPath map[*Tensor]bool) {
	if onPath[t] {
		if g.err == nil {
			g.err = fmt.Errorf("tandem: BuildForwardExpand: %v depends on itself (its sources lead back to it: a cycle)", t)
		}
		return
	}
	if _, seen := g.visited[t]; seen {
		return
	}
	g.visited[t] = struct{}{}
	if t.err != nil && g.err == nil {
		g.err = t.err
		return
	}
	onPath[t] = true
	for _, s := range t.Src {
		if s == nil {
			continue
		}
		if s.ctx != nil && s.ctx != t.ctx {
			if err := s.ctx.Err(); err != nil && g.err == nil {
				g.err = err
			}
		}
		g.visit(s, onPath)
		g.useCounts[s]++
	}
	delete(onPath, t)
	if g.err != nil {
		return
	}
	if t.Op == OpNone && t.Flags&FlagParam == 0 {
		if len(g.leafs) >= g.size {
			g.err = fmt.Errorf("tandem: graph is full: more than %d leafs (make a larger graph)", g.size)
			return
		}
		g.leafs = append(g.leafs, t)
		return
	}
	if len(g.nodes) >= g.size {
		g.err = fmt.Errorf("tandem: graph is full: more than %d nodes (make a larger graph)", g.size)
		return
	}
	g.nodes = append(g.nodes, t)
}

// View returns a graph over nodes [i0, i1) of g, sharing g's tensors (no leafs). Out-of-range bounds
// are clamped. A nil g gives an empty graph whose Err is ErrNilGraph.
func (g *Graph) View(i0, i1 int) *Graph {
	if g == nil {
		return &Graph{visited: map[*Tensor]struct{}{}, useCounts: map[*Tensor]int{}, err: ErrNilGraph}
	}
	i0 = max(0, min(i0, len(g.nodes)))
	i1 = max(i0, min(i1, len(g.nodes)))
	return &Graph{size: i1 - i0, nodes: g.nodes[i0:i1:i1], useCounts: g.useCounts, visited: g.visited, err: g.err}
}

// NewGraphFromLists builds a graph with exactly the given nodes (in execution order) and leafs; use
// counts are derived from the nodes' sources. Schedulers use it to run and allocate rewritten graphs.
// A nil entry in either list makes the graph's Err say so (it is left out of the graph).
func NewGraphFromLists(nodes, leafs []*Tensor) *Graph {
	if slices.Contains(nodes, nil) || slices.Contains(leafs, nil) {
		g := NewGraphFromLists(slices.DeleteFunc(slices.Clone(nodes), isNilTensor), slices.DeleteFunc(slices.Clone(leafs), isNilTensor))
		g.err = fmt.Errorf("tandem: NewGraphFromLists: nil tensor in the node or leaf list")
		return g
	}
	g := &Graph{size: max(len(nodes), len(leafs)), nodes: nodes, leafs: leafs,
		visited: make(map[*Tensor]struct{}, len(nodes)+len(leafs)), useCounts: make(map[*Tensor]int, len(nodes))}
	for _, n := range nodes {
		g.visited[n] = struct{}{}
		for _, s := range n.Src {
			if s != nil {
				g.useCounts[s]++
			}
		}
	}
	for _, l := range leafs {
		g.visited[l] = struct{}{}
	}
	return g
}
