// Package core is the vocabulary every tandem package speaks: element types, tensors, contexts
// that create them, the ops (Context methods), compute graphs, the backend interfaces and their
// registry, the host buffer type, and tensor transfers (TensorSet, TensorGet, SetFloat32s, ...).
//
// # Bad input
//
// Nothing in this package panics on bad input. Constructors (Context methods) record the first
// error on the context (Context.Err) and return a placeholder tensor that carries it
// (Tensor.Err); building a graph from a placeholder, or from a context holding an error, makes the
// graph's Err report it, and computing such a graph returns it. Runtime helpers return errors.
//
//   - nil: a nil operand, a nil context (methods called on a nil *Context) and a nil graph are
//     errors that say "nil"; only the operands documented as optional (SoftMaxExt's mask,
//     RopeExt's freq factors) may be nil. GLU and its Split forms need both operands; GLUSingle
//     is the one-operand form.
//   - overflow: every size, stride and offset is derived with overflow-checked arithmetic
//     (CheckedAdd, CheckedMul, CheckedAlignUp). A tensor may cover at most MaxTensorBytes bytes;
//     an offset+size that would wrap is an error wrapping ErrOverflow, never a wrapped range that
//     passes a check.
//   - views: a view's strides must be ≥ 0 and its first and last byte must lie inside its source,
//     for any strides (ViewInit checks again when memory is given).
//   - empty tensors (a dimension of size 0) are allowed. They cover no bytes and get the dense
//     strides of their shape, so every row offset a kernel computes is 0. An op whose result is
//     empty is never run by a backend (a zero-size result). An op whose result has elements may
//     read an empty operand only where the result is defined — SUM and SUM_ROWS (0), MEAN (NaN,
//     0/0), ARGMAX (0) and CONCAT (the other part) — every other op rejects an empty operand at
//     construction, naming it; MUL_MAT with an inner dimension k of 0 says so.
//   - silent writes: SetFloat32s and SetInt32s need exactly one value per element. Float32s and
//     Int32s return nil for a tensor that is not in host memory (a NoAlloc or device tensor), so
//     use HostFloat32s/HostInt32s/HostData (which say why) or SetFloat32s/GetFloat32s (which work
//     wherever the tensor lives). A buffer that reports Free (FreedReporter) makes every transfer
//     of its tensors fail with ErrBufferFreed ("buffer was freed"). NewContext with an impossible
//     MemSize records the error (NewContextErr returns it).
package core
