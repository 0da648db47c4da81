// Package tests holds tandem's cross-backend op harness: a table of op cases run on every
// available backend and compared with the CPU backend's reference kernels by NMSE, in the spirit of
// ggml's test-backend-ops.
//
// Most cases are written by hand (cases*.go). cases_sweep.go generates more from the loops of
// test-backend-ops' make_test_cases_eval, with its error limits: MUL_MAT, MUL_MAT_ID, OUT_PROD,
// GET_ROWS, SET_ROWS, CPY and ADD/SUB/MUL/DIV over every weight and activation type pair tandem
// builds, broadcast factors on dims 2 and 3, permuted and viewed operands and odd sizes. A default
// run takes a fixed sample of the small ones (by a hash of the name); TANDEM_LONG=1 takes all of
// them:
//
//	TANDEM_LONG=1 TANDEM_REQUIRE_VULKAN=1 go test -run 'TestOps|TestHarnessCPUSelf' -timeout 2h ./tests
//
// (add -tags gl and TANDEM_REQUIRE_GL=1 for the OpenGL backend). The GPU backends' expected
// unsupported sweep cases follow a rule by type (sweepGPUReason), which TestSweepGPURule checks
// against the devices for the whole sweep in every run.
package tests
