// Package alloc places tensors in backend buffers: a linear allocator over one buffer
// (TensorAllocator), a measuring allocator that only computes offsets (DynAllocator), the graph
// allocator that plans a compute graph's memory by simulating its execution order (GraphAllocator),
// and AllocCtxTensors, which gives every tensor of a NoAlloc context its memory (ggml-alloc).
package alloc
