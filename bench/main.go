// Command bench compares tandem's devices on real work: `go run ./bench` (see -h).
//
// It finds every device (the CPU always, each Vulkan device when there is one), runs a suite of
// cases on each (MUL_MAT over sizes and weight types, elementwise and normalization ops, a
// transformer-like block alone and through the scheduler), and prints a table of median times,
// throughput, speed against the CPU and the error of each result against the CPU's.
package main

import "os"

func main() { os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr)) }
