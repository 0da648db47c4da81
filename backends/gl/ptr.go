//go:build gl && cgo

package gl

import "unsafe"

// glPtr passes the address of Go memory to a GL call that reads or writes it before returning
// (glBufferSubData, glGetBufferSubData, glClearBufferSubData copy synchronously), so the memory
// need not outlive the call and cgo's pointer rules hold: it contains no Go pointers.
func glPtr[T any](p *T) unsafe.Pointer { return unsafe.Pointer(p) }
