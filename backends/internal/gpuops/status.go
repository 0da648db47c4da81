package gpuops

import (
	"encoding/binary"
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// Device-side index checks. GET_ROWS and SET_ROWS read their indices on the device, so the host
// cannot check them before the dispatch without a round trip. Instead each such node gets a
// status word of its own in a small host-readable buffer, zeroed before the graph runs: its shader
// never follows a bad index (negative or past the end) and records the first bad row it met (the
// complement of its row-major number, with atomicMax) in the word. After the graph has finished,
// GraphCompute reads the words back and turns the first recorded one into the error the CPU
// backend returns for the same input ("GET_ROWS: index 12 at [3,0,0] of ... is out of range: ...
// has 10 rows"), naming the node.

// indexCheck is one node's status word in this GraphCompute.
type indexCheck struct {
	node int // position in the graph's nodes
	t    *core.Tensor
}

// checksNeeded counts the nodes of nodes that take a status word.
func checksNeeded(nodes []*core.Tensor) int {
	n := 0
	for _, t := range nodes {
		if (t.Op == core.OpGetRows || t.Op == core.OpSetRows || t.Op == core.OpMulMatID) && !t.IsEmpty() {
			n++
		}
	}
	return n
}

// statusStride is the distance between two status words: each is bound as a range of its own (so
// the synchronization tracking sees no overlap between nodes), at an allowed offset.
func (d *Device) statusStride() uint64 {
	return max(d.MinStorageBufferOffsetAlignment, 4)
}

// resetChecks makes room for n status words, zeroes them and forgets the previous graph's.
func (e *Encoder) resetChecks(n int) error {
	e.checks = e.checks[:0]
	if n == 0 {
		return nil
	}
	size := uint64(n) * e.dev.statusStride()
	if e.status == nil || e.status.Size() < size {
		if e.status != nil {
			e.status.Destroy()
			e.status = nil
		}
		sb, err := e.rt.NewStatusBuffer(max(size, 64*e.dev.statusStride()))
		if err != nil {
			return fmt.Errorf("status buffer for index checks: %w", err)
		}
		e.status = sb
	}
	return e.status.Memset(0, size, 0)
}

// addCheck gives node t (at position i of the graph) the next status word and returns its binding.
func (e *Encoder) addCheck(i int, t *core.Tensor) (Binding, error) {
	k := uint64(len(e.checks))
	stride := e.dev.statusStride()
	if e.status == nil || (k+1)*stride > e.status.Size() {
		return Binding{}, fmt.Errorf("internal error: no status word left for %v", t)
	}
	e.checks = append(e.checks, indexCheck{node: i, t: t})
	return Binding{Buf: e.status, Off: k * stride, Size: 4}, nil
}

// CheckIndices reads the status words back (after every dispatch of the graph has finished) and
// returns the error of the first node whose shader met a bad index, nil if none did.
func (e *Encoder) CheckIndices() error {
	if len(e.checks) == 0 {
		return nil
	}
	stride := e.dev.statusStride()
	raw := make([]byte, uint64(len(e.checks))*stride)
	if err := e.status.Read(0, raw); err != nil {
		return fmt.Errorf("%s: reading the index checks: %w", e.name, err)
	}
	return e.indexError(raw)
}

// indexError returns the error of the first check whose word in raw (the status buffer's bytes)
// records a bad index, nil if none does.
func (e *Encoder) indexError(raw []byte) error {
	stride := e.dev.statusStride()
	for k, c := range e.checks {
		w := binary.LittleEndian.Uint32(raw[uint64(k)*stride:])
		if w == 0 {
			continue
		}
		return fmt.Errorf("%s: node %d %v: %w", e.name, c.node, c.t, badIndexError(c.t, int64(^w)))
	}
	return nil
}

// badIndexError describes the bad index of node t at row-major position pos, in the CPU backend's
// words. The index's value is read back from its tensor; if a later node overwrote it with an
// index in range, the error says so instead of naming a value.
func badIndexError(t *core.Tensor, pos int64) error {
	if t.Op == core.OpMulMatID { // pos = slot + n_used*token
		return badExpertError(t, pos%t.Ne[1], pos/t.Ne[1])
	}
	var idx, rows *core.Tensor
	var i1, i2, i3 int64
	var limit int64
	switch t.Op {
	case core.OpGetRows:
		idx, rows = t.Src[1], t.Src[0]
		i1, i2, i3 = pos%t.Ne[1], pos/t.Ne[1]%t.Ne[2], pos/(t.Ne[1]*t.Ne[2])
		limit = rows.Ne[1]
	default: // SET_ROWS: pos is the source row (i1, i2, i3), broadcast over the index dims 1 and 2
		src := t.Src[1]
		idx, rows = t.Src[2], t.Src[0]
		i1, i2, i3 = pos%src.Ne[1], pos/src.Ne[1]%src.Ne[2], pos/(src.Ne[1]*src.Ne[2])
		i2, i3 = i2%idx.Ne[1], i3%idx.Ne[2]
		limit = t.Ne[1]
	}
	val, err := indexValue(idx, i1, i2, i3)
	switch {
	case err != nil:
		return fmt.Errorf("%v: index at [%d,%d,%d] of %v is out of range (%v has %d rows; reading its value: %w)",
			t.Op, i1, i2, i3, idx, rows, limit, err)
	case val >= 0 && val < limit:
		return fmt.Errorf("%v: index at [%d,%d,%d] of %v was out of range: %v has %d rows (a later node overwrote the index)",
			t.Op, i1, i2, i3, idx, rows, limit)
	}
	return fmt.Errorf("%v: index %d at [%d,%d,%d] of %v is out of range: %v has %d rows",
		t.Op, val, i1, i2, i3, idx, rows, limit)
}

// indexValue reads element (i1, i2, i3) of the i32 or i64 index tensor idx.
func indexValue(idx *core.Tensor, i1, i2, i3 int64) (int64, error) {
	if idx.Buffer == nil {
		return 0, fmt.Errorf("%v has no buffer", idx)
	}
	off := i1*idx.Nb[0] + i2*idx.Nb[1] + i3*idx.Nb[2]
	raw := make([]byte, idx.Type.Size())
	if err := idx.Buffer.GetTensor(idx, raw, off); err != nil {
		return 0, err
	}
	if idx.Type == core.TypeI64 {
		return int64(binary.LittleEndian.Uint64(raw)), nil
	}
	return int64(int32(binary.LittleEndian.Uint32(raw))), nil
}

// badExpertError describes MUL_MAT_ID's bad expert id at (slot, token), in the CPU backend's words.
func badExpertError(t *core.Tensor, slot, tok int64) error {
	as, ids := t.Src[0], t.Src[2]
	val, err := indexValue(ids, slot, tok, 0)
	switch {
	case err != nil:
		return fmt.Errorf("MUL_MAT_ID: expert id at slot %d of token %d in %v is out of range (%v has %d experts; reading its value: %w)",
			slot, tok, ids, as, as.Ne[2], err)
	case val >= 0 && val < as.Ne[2]:
		return fmt.Errorf("MUL_MAT_ID: expert id at slot %d of token %d in %v was out of range: %v has %d experts (a later node overwrote the id)",
			slot, tok, ids, as, as.Ne[2])
	}
	return fmt.Errorf("MUL_MAT_ID: expert id %d at slot %d of token %d in %v is out of range: %v has %d experts",
		val, slot, tok, ids, as, as.Ne[2])
}
