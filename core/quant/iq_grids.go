package quant

// The IQ types' grids, sign tables and masks are ggml-common.h's format-defining constant data,
// generated from ggml d99724f2's header (gen_iqgrids.go; $GGML_SRC points at the ggml tree).

//go:generate go run gen_iqgrids.go -o iq_grids_signs.go kmask_iq2xs ksigns_iq2xs
//go:generate go run gen_iqgrids.go -o iq_grids_iq2.go iq2xxs_grid iq2xs_grid iq2s_grid
//go:generate go run gen_iqgrids.go -o iq_grids_iq1.go iq1s_grid
