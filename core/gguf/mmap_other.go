//go:build !unix

package gguf

import "errors"

// canMap is false where tandem has no mapping support: Load copies instead.
func (f *File) canMap() bool { return false }

func (f *File) mapFile() (*mappedBuffer, error) {
	return nil, errors.New("gguf: mapping is not supported here")
}
