// Package core is the vocabulary every tandem package speaks: element types, tensors, the
// contexts that create them, the ops that connect them into a graph, and the interfaces that
// backends (CPU, Vulkan, …) implement to hold and compute them.
//
// # Object model
//
//   - A [Context] creates tensors; it is safe for concurrent use. With ContextParams.NoAlloc false it owns a host arena of MemSize
//     bytes and every tensor gets its data there at once; with NoAlloc true it creates metadata only
//     and the alloc package places the tensors later, in a backend's buffers.
//   - A [Tensor] is an array of up to four dimensions, or the recipe for one: Op and Src say how it
//     is computed. Nothing is computed when an op is called; the op only checks its operands and
//     records the recipe.
//   - A [Graph] is the ordered list of nodes to compute for some outputs
//     ([Graph.BuildForwardExpand] walks the sources depth first and puts each node after its inputs).
//   - A [Backend] computes a graph whose tensors live in its [Buffer]s; a [BufferType] makes buffers
//     for a device; a [Device] describes one piece of hardware and creates backends. Backend packages
//     register their devices when imported (import _ "github.com/tandem-ml/tandem/backends/cpu"),
//     and [Devices] lists them, GPUs first and the CPU last.
//
// # Shapes and strides
//
// Ne holds the number of elements per dimension and Nb the byte stride of each, ggml's order:
// dimension 0 is the fastest (the columns of a row-major matrix), so a matrix of 4 rows of 2
// columns is NewTensor2D(TypeF32, 2, 4) with Ne = [2 4 1 1] and Nb = [4 8 32 32]. Views, permutes
// and transposes change Nb, not the bytes.
//
// # Matrix products
//
// MulMat follows ggml: a is [k, m] (m rows of length k), b is [k, n] (n rows of length k), and the
// result is [m, n] with r[i, j] = row i of a · row j of b. In row-major terms the result is b·aᵀ,
// which lets both operands be read along their rows:
//
//	  a (m×k)        b (n×k)          r = MulMat(a, b)  (n×m, ne = [m n])
//	[ a0 ----- ]   [ b0 ----- ]      [ a0·b0  a1·b0  a2·b0 ]
//	[ a1 ----- ]   [ b1 ----- ]      [ a0·b1  a1·b1  a2·b1 ]
//	[ a2 ----- ]
//
// Weights are passed as a, activations as b. Higher dimensions broadcast: a's dims 2 and 3 must
// divide b's.
//
// # Tensor data
//
// One pair reads and writes a tensor's elements, wherever it lives (host, device, remote) and
// whatever its layout (views write only their elements): [SetFloat32s] converts float32 values to
// the tensor's type — F16/BF16 rounding, I32, and the block-quantized types through the reference
// quantizers, so SetFloat32s on a Q4_0 tensor is how quantized weights are made — and
// [GetFloat32s] converts back (dequantizing). [SetInt32s] and [GetInt32s] do the same for I32
// tensors without going through float32. For host tensors, [Tensor.Float32s] and [Tensor.Int32s]
// are views of the memory itself, to read and write in place; [TensorSet] and [TensorGet] move raw
// bytes, and [Type.FromFloat] / [Type.ToFloat] convert rows without a tensor.
//
// # Lifecycle
//
// What holds resources is released explicitly; everything else is garbage collected:
//
//   - Buffer: Free returns its memory to the device (a host buffer, a Vulkan allocation). Tensors
//     placed in it fail with ErrBufferFreed afterwards.
//   - Backend: Close stops its workers and releases its device objects; it is an io.Closer.
//   - scheduler.Scheduler: Close frees its compute buffers (and the backends it created itself).
//   - alloc.GraphAllocator: Free releases the compute buffers it allocated.
//   - gguf.File and gguf.Model: Close unmaps the file and frees the model's buffers.
//   - Context and Graph hold only memory: nothing to close.
//
// Free is the word for memory (buffers, allocators), Close for everything that owns more than
// memory (backends, schedulers, files), as in ggml's buffer_free and Go's io.Closer.
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
//     Int32s return nil for a tensor that is not in host memory (a NoAlloc or device tensor);
//     SetFloat32s/GetFloat32s (and the Int32s pair) work wherever the tensor lives and say why
//     when they cannot. A buffer that reports Free (FreedReporter) makes every transfer of its
//     tensors fail with ErrBufferFreed ("buffer was freed"). NewContext with an impossible
//     MemSize records the error on the context, like an op's error (Err returns it).
package core
