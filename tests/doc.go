// Package tests holds tandem's cross-backend op harness: a table of op cases run on every
// available backend and compared with the CPU backend's reference kernels by NMSE, in the spirit of
// ggml's test-backend-ops.
package tests
