package gpuops

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// Scratch memory. An op whose shaders pass intermediate results between dispatches (the split
// FLASH_ATTN_EXT) says how many bytes it needs through its opImpl.scratch; Start sizes one device
// buffer for the largest need of the graph's nodes before anything is recorded, so the buffer
// that the recorded dispatches bind is never replaced while they may still run (GraphCompute
// waits for a graph before the next Start). Every node's scratch starts at byte 0: two nodes that
// use it in a row conflict as any write and read of one range do, and sync puts a barrier between
// them. The buffer is kept across graphs and freed by Close.

// scratchNeed returns the scratch bytes the largest user among nodes needs (0: none).
func (e *Encoder) scratchNeed(nodes []*core.Tensor) uint64 {
	var need uint64
	for _, n := range nodes {
		if n == nil || n.Op < 0 || n.Op >= core.OpCount || opTable[n.Op].scratch == nil || n.IsEmpty() {
			continue
		}
		if !Supports(e.dev, n) {
			continue // Encode reports it
		}
		need = max(need, opTable[n.Op].scratch(e, n))
	}
	return need
}

// reserveScratch makes the scratch buffer at least need bytes long (rounded up to 64 KiB).
func (e *Encoder) reserveScratch(need uint64) error {
	if need == 0 || (e.scratch != nil && e.scratch.Size() >= need) {
		return nil
	}
	if e.scratch != nil {
		e.scratch.Destroy()
		e.scratch = nil
	}
	const grain = 64 << 10
	sb, err := e.rt.NewScratchBuffer((need + grain - 1) / grain * grain)
	if err != nil {
		return fmt.Errorf("scratch buffer of %d bytes: %w", need, err)
	}
	e.scratch = sb
	return nil
}

// scratchOperand returns the first size bytes of the scratch buffer as an operand (nothing to
// tell the shader: offset 0), ok false when Start did not reserve that much.
func (e *Encoder) scratchOperand(size uint64) (operand, bool) {
	if e.scratch == nil || e.scratch.Size() < size || size == 0 {
		return operand{}, false
	}
	return operand{bind: Binding{Buf: e.scratch, Size: size}, sp: span{buf: e.scratch, to: size}}, true
}
