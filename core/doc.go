// Package core is the vocabulary every tandem package speaks: element types, tensors, the
// contexts that create them, the ops that connect them into a graph, and the interfaces that
// backends (CPU, Vulkan, …) implement to hold and compute them.
//
// # Object model
//
//   - A [Context] creates tensors. With ContextParams.NoAlloc false it owns a host arena of MemSize
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
// # Errors
//
// Building a graph never panics on bad input: an op with mismatched shapes or types records an
// error on its Context ([Context.Err] returns the first) and returns a placeholder tensor, and
// computing a graph that holds such a tensor returns that error. Runtime calls (TensorSet,
// TensorGet, allocation, compute) return errors that name what was wrong.
package core
