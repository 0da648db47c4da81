package alloc

import (
	"errors"

	"github.com/tandem-ml/tandem/core"
)

// Alias names a tensor that shares the memory of a tensor of the graph: AllocGraph gives Tensor
// exactly what it gives Of, and a node of the graph that reads Tensor reads Of's memory (its
// lifetime counts as Of's). A scheduler uses it for the user's tensors whose computation runs on a
// stand-in (a node with rewritten sources): the user's tensor is placed directly, the stand-in
// shares its place.
type Alias struct {
	Tensor, Of *core.Tensor
}

// Placement is where AllocGraph put one tensor.
type Placement struct {
	Tensor *core.Tensor
	// BufferID is the buffer id whose memory holds the tensor, -1 for a view (it lives in its
	// source's memory, wherever that is).
	BufferID int
	Buffer   core.Buffer
	Offset   int64
	// Alias is set for a tensor placed as an alias (SetAliases).
	Alias bool
}

// SetAliases replaces the aliases used by the following Reserve, AllocGraph and PlaceAgain calls
// (nil: none). Entries with a nil tensor are ignored. Aliases are not part of a plan's fingerprint:
// a plan made with them is reused only by a caller that sets the same ones. It does nothing on a
// nil allocator.
func (ga *GraphAllocator) SetAliases(aliases []Alias) {
	if ga == nil {
		return
	}
	ga.aliases = ga.aliases[:0]
	clear(ga.aliasOf)
	for _, a := range aliases {
		if a.Tensor == nil || a.Of == nil || a.Tensor == a.Of {
			continue
		}
		if ga.aliasOf == nil {
			ga.aliasOf = make(map[*core.Tensor]*core.Tensor, len(aliases))
		}
		ga.aliases = append(ga.aliases, a)
		ga.aliasOf[a.Tensor] = a.Of
	}
}

// AppendPlaced appends to dst what the last AllocGraph, AllocGraphN or PlaceAgain gave memory, in
// the plan's order (leafs, then nodes, then other tensors the nodes reference, each alias right
// after the tensor it shares memory with): tensors placed in this allocator's buffers, views
// initialised on their source's memory, and aliases. Tensors whose memory belongs to someone else
// are not in it. Nothing is appended before the first placement, after Free, or for a nil
// allocator.
func (ga *GraphAllocator) AppendPlaced(dst []Placement) []Placement {
	if ga == nil {
		return dst
	}
	return append(dst, ga.placed...)
}

// errNoPlan is returned by PlaceAgain when there is no plan to place.
var errNoPlan = errors.New("tandem: alloc: PlaceAgain: no plan (call ReserveN or AllocGraphN first)")

// PlaceAgain places the tensors of the graph of the current plan (the one given to the last Reserve,
// ReserveN, AllocGraph or AllocGraphN) as AllocGraph would, without analyzing the graph again. It is
// for a caller that knows the graph has not changed since (a scheduler that fingerprints the graph
// it derives this one from); use AllocGraph otherwise. It fails when there is no plan (none yet,
// after Free, or after a failed one) or on a nil allocator.
func (ga *GraphAllocator) PlaceAgain() error {
	if err := ga.usable(); err != nil {
		return err
	}
	ga.replanned = false
	if ga.err != nil {
		return ga.err
	}
	if !ga.cur.valid {
		return errNoPlan
	}
	return ga.place(ga.cur, ga.cur.gi)
}

// place puts the tensors of gi (an analysis equal to p's) where plan p says; an alias gets its
// record's memory right after the record, before any view of it is initialised.
func (ga *GraphAllocator) place(p *planData, gi *graphInfo) error {
	clear(ga.placed)
	ga.placed = ga.placed[:0]
	prev, next := ga.inputsAt, ga.inputsSpare
	if next == nil {
		next = map[*core.Tensor]inputAt{}
	}
	clear(next)
	// until this placement is complete, no input is known to keep its bytes
	ga.inputsAt, ga.inputsSpare = nil, nil
	recs, ts := p.gi.recs, gi.ts
	aliases := gi.aliases
	for i := range recs {
		r := &recs[i]
		t := ts[i]
		switch {
		case p.tslot[i] >= 0:
			sl := p.tslot[i]
			at := p.slotAddr[sl]
			buf := ga.bufs[p.slotAlloc[sl]][at.Chunk]
			t.Buffer = nil
			if err := core.TensorAlloc(buf, t, at.Offset); err != nil {
				return core.Errorf("tandem: alloc: placing %v: %w", t, err)
			}
			if r.input() {
				// Only the placement right before this one can vouch for the bytes: any other
				// graph placed in between may have computed over them.
				here := inputAt{buf, at.Offset}
				if was, ok := prev[t]; (!ok || was != here) && t.NBytes() > 0 {
					core.ExpectWrite(t)
				}
				next[t] = here
			}
			ga.placed = append(ga.placed, Placement{Tensor: t, BufferID: int(r.bufID), Buffer: t.Buffer, Offset: t.Offset})
		case r.view:
			if t.Buffer == nil || ga.owns(t.Buffer) {
				t.Buffer, t.Offset = nil, 0
				if t.ViewSrc.Buffer != nil {
					if err := core.ViewInit(t); err != nil {
						return core.Errorf("tandem: alloc: view %v: %w", t, err)
					}
					ga.placed = append(ga.placed, Placement{Tensor: t, BufferID: -1, Buffer: t.Buffer, Offset: t.Offset})
				}
			}
		case !r.ext && t.Buffer != nil:
			// placed by an earlier plan but not by this one: drop the stale place
			t.Buffer, t.Offset = nil, 0
		}
		for len(aliases) > 0 && aliases[0].rec == int32(i) {
			ga.placeAlias(aliases[0].t, t, r.ext, p.tslot[i] >= 0, r.bufID)
			aliases = aliases[1:]
		}
	}
	ga.inputsAt, ga.inputsSpare = next, prev
	return nil
}

// inputAt is where a placement put an input.
type inputAt struct {
	buf core.Buffer
	off int64
}

// forgetInputs drops what the last placement knew about its inputs' bytes (their memory was freed
// or replaced): the next placement marks every input it places.
func (ga *GraphAllocator) forgetInputs() {
	clear(ga.inputsAt)
}

// placeAlias gives alias the memory of of (its record is ext when that memory is someone else's,
// slotted when it was planned here in buffer id bufID).
func (ga *GraphAllocator) placeAlias(alias, of *core.Tensor, ext, slotted bool, bufID int32) {
	if alias.Buffer != nil && !ga.owns(alias.Buffer) {
		return // memory of its own: not ours to move
	}
	alias.Buffer, alias.Offset = nil, 0
	if ext || of.Buffer == nil {
		return
	}
	id := -1
	if slotted {
		id = int(bufID)
	}
	alias.Buffer, alias.Offset = of.Buffer, of.Offset
	ga.placed = append(ga.placed, Placement{Tensor: alias, BufferID: id, Buffer: alias.Buffer, Offset: alias.Offset, Alias: true})
}
