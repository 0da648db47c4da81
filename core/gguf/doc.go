// Package gguf reads, validates and writes GGUF files (ggml's model format, versions 2 and 3) and
// loads their tensors into tandem buffers.
//
// A file is a header (magic "GGUF", version, tensor and key counts), metadata key/value pairs in
// file order, tensor infos (name, shape, type, offset), padding to the file's alignment
// (general.alignment, 32 by default), and the data section. Open and Read parse and check the whole
// header without trusting any count, length or offset in it: every allocation is bounded by the bytes
// that remain in the file, and a malformed file gives an error naming what is wrong, never a panic.
//
//	f, err := gguf.Open("model.gguf")
//	arch, err := f.GetString("general.architecture")
//	m, err := f.Load(&gguf.LoadOptions{Placement: gguf.ByBlock(20, vk.DefaultBufferType(), core.HostBufferType())})
//	// m.Ctx holds the tensors, placed and filled; m.Close frees the buffers.
//
// Write (or a Writer) produces files that ggml's gguf reader accepts; reading a file and writing it
// back with the same metadata and tensors reproduces it byte for byte.
package gguf
