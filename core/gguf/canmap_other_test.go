//go:build !unix

package gguf

const canMapHere = false
