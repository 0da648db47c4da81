// Package alloc places tensors in backend buffers: a linear allocator over one buffer
// (TensorAllocator), a measuring allocator that only computes offsets (DynAllocator), the graph
// allocator that plans a compute graph's memory by simulating its execution order (GraphAllocator),
// and AllocCtxTensors, which gives every tensor of a NoAlloc context its memory (ggml-alloc).
//
// # Inputs
//
// The graph allocator reuses the memory of a tensor once the graph no longer needs it, except for
// outputs and inputs. An input is any tensor the graph reads but does not compute: every leaf,
// whether or not it is flagged with SetInput, and every tensor flagged input or param. An input
// placed by the graph allocator keeps its memory for the whole graph, so a graph computed again
// reads the inputs it read the first time.
//
// An input that AllocGraph places anywhere but where the previous placement of the same allocator
// had it (a new graph, another graph placed in between, a buffer grown or freed) holds whatever that
// memory held. Such an input awaits a write (core.ExpectWrite): a backend's or scheduler's
// GraphCompute of a graph that reads it fails with core.ErrInputNotSet naming it until it is
// written (core.SetFloat32s, SetInt32s, TensorSet, TensorMemset, TensorCopy, or its host slice).
// Tensors with memory of their own — weights placed by AllocCtxTensors or gguf.Load, KV caches,
// host contexts — are not placed by the graph allocator and are never asked for again.
//
// # Placing tensors outside graphs
//
// AllocCtxTensors (a context's tensors) and AllocTensors (a list of them) are the one way tensors
// that live outside compute graphs get buffers: packed in order in runs no larger than the buffer
// type's maximum size, with overflow-checked sizes, weights going to the device's extra buffer
// types where WeightBufferTypes says. gguf.Load uses them for every tensor it does not map from the
// file (core/gguf imports alloc; nothing alloc imports depends on gguf).
package alloc
