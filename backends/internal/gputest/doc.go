// Package gputest holds what the GPU backends' tests share: placing a context's tensors in one
// buffer, the GraphComputeContext contract, and the op benchmarks, each run against any
// core.Backend. Only test files import it.
package gputest
