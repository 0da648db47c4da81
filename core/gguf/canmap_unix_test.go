//go:build unix

package gguf

const canMapHere = true
