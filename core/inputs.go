package core

import (
	"errors"
	"fmt"
)

// Input write tracking. A graph allocator that gives a graph's input memory which held other
// bytes before (another graph's tensors, an earlier placement) calls ExpectWrite on it: until the
// input is written, computing a graph that reads it is an error (ErrInputNotSet) instead of a
// computation on stale bytes. These count as writes, of the tensor and, for a view, of the tensor
// whose memory it uses (its DataSource): TensorSet, TensorMemset, SetFloat32s, SetInt32s,
// TensorCopy into it, and taking its host memory (Data, HostData, Float32s, Int32s), through which
// the caller can write. Writing part of a tensor
// counts as writing it. Tensors with memory of their own (weights, KV caches, host contexts) are
// never marked.

// ErrInputNotSet is returned (wrapped, naming the tensor) by a backend's or a scheduler's
// GraphCompute when the graph reads an input that was not written since a graph allocator gave it
// memory: its bytes would be whatever the memory held before.
var ErrInputNotSet = errors.New("input not written since it was given memory")

// ExpectWrite marks t (not a view) as holding no valid bytes until it is written; see
// ErrInputNotSet. Graph allocators call it when they place an input where other bytes were. It
// does nothing for a nil t or a view.
func ExpectWrite(t *Tensor) {
	if t != nil && t.ViewSrc == nil {
		t.unset = true
	}
}

// AwaitsWrite reports whether t, or the tensor whose memory t uses, was marked by ExpectWrite and
// not written since (false for a nil t).
func (t *Tensor) AwaitsWrite() bool {
	for ; t != nil; t = t.ViewSrc {
		if t.unset {
			return true
		}
	}
	return false
}

// noteWrite records a write of t's memory: t and the tensors it is a view of no longer await one.
// The flag is only read when nothing is to be cleared, so concurrent readers of one tensor (the
// kernels of a graph taking its host memory) never write it.
func noteWrite(t *Tensor) {
	for ; t != nil; t = t.ViewSrc {
		if t.unset {
			t.unset = false
		}
	}
}

// CheckInputsSet returns an error wrapping ErrInputNotSet and naming the tensor when a node of g
// reads (directly or through a view) a tensor that awaits a write, or a leaf of g awaits one; nil
// otherwise (and for a nil g). Backends call it before computing a graph.
func CheckInputsSet(g *Graph) error {
	if g == nil {
		return nil
	}
	for _, l := range g.Leafs() {
		if l.AwaitsWrite() {
			return inputNotSet(l)
		}
	}
	for _, n := range g.Nodes() {
		for _, s := range n.Src {
			if s.AwaitsWrite() {
				return inputNotSet(s)
			}
		}
	}
	return nil
}

func inputNotSet(t *Tensor) error {
	root := t.DataSource()
	for s := t; s != nil; s = s.ViewSrc {
		if s.unset {
			root = s
			break
		}
	}
	return fmt.Errorf("tandem: input %v: %w (its bytes are what the memory held before; write it with SetFloat32s, SetInt32s, TensorSet or TensorMemset after each AllocGraph that moves it)",
		root, ErrInputNotSet)
}
