//go:build unix

package gguf

import (
	"fmt"
	"os"
	"syscall"
)

// canMap reports whether the file is an os.File that can be mapped.
func (f *File) canMap() bool {
	_, ok := f.r.(*os.File)
	return ok && f.size > 0 && int64(int(f.size)) == f.size
}

// mapFile maps the whole file. The mapping is private and copy-on-write: the file is opened
// read-only and never changes, and the pages stay shared with the page cache until written.
func (f *File) mapFile() (*mappedBuffer, error) {
	osf := f.r.(*os.File)
	data, err := syscall.Mmap(int(osf.Fd()), 0, int(f.size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("gguf: mapping %s: %w", f.path, err)
	}
	return &mappedBuffer{data: data, unmap: syscall.Munmap}, nil
}
