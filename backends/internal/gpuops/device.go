package gpuops

import "github.com/tandem-ml/tandem/core"

// Device describes a device in the terms the encoders use: the choices of kernels, tiles and
// workgroup sizes and the limits every binding and grid must respect.
type Device struct {
	// Software is true for a CPU implementation (lavapipe, llvmpipe): MUL_MAT takes the kernels
	// and tiles tuned for it.
	Software bool
	// SubgroupSize is the device's subgroup width (0 when unknown).
	SubgroupSize uint32
	// SubgroupArithmetic is true when compute shaders have subgroup arithmetic (the mat-vec
	// kernel then reduces with it).
	SubgroupArithmetic bool
	// Storage16Bit is true when shaders can address 16-bit storage (f16, bf16 and the quantized
	// blocks, read as 16-bit words).
	Storage16Bit bool
	// WordWrites is true when 16-bit stores rewrite whole 32-bit words (16-bit storage emulated
	// with words, as in OpenGL): writes are then tracked by word, so neighbouring tensors that
	// share a word are ordered.
	WordWrites bool

	MaxComputeWorkGroupCount        [3]uint32
	MaxComputeWorkGroupSize         [3]uint32
	MaxComputeWorkGroupInvocations  uint32
	MaxComputeSharedMemorySize      uint32 // bytes
	MaxStorageBufferRange           uint32 // bytes one storage binding may span
	MinStorageBufferOffsetAlignment uint64 // bytes; a binding starts at a multiple of it
}

// fitsBinding reports whether t can be bound as one storage buffer (its span plus the worst-case
// misalignment within MaxStorageBufferRange).
func (d *Device) fitsBinding(t *core.Tensor) bool {
	return t.NBytes()+int64(d.MinStorageBufferOffsetAlignment) <= int64(d.MaxStorageBufferRange)
}

// groups returns the workgroup count for n items of per items each, capped by the device limit of
// dimension dim (shaders loop over the rest).
func (d *Device) groups(n, per int64, dim int) uint32 {
	g := (n + per - 1) / per
	return uint32(min(g, int64(d.MaxComputeWorkGroupCount[dim])))
}

// softLoopLimit is the most iterations one loop of a shader may run over an invocation on a
// software device: llvmpipe ends a loop after 65,535, counted over all its entries in the
// invocation, and leaves garbage behind. Plans that would cross it split their work instead.
const softLoopLimit = 60000
