package quant

// The IQ2 and IQ1 grids are ggml-common.h's format-defining constant data, generated from ggml
// d99724f2's header by gen_iqtables.go ($GGML_DIR is the ggml tree, e.g. /tmp/rpcbuild-eng/ggml)
// as rows of 8 bytes: the IQ2 grids' bytes are magnitudes (8, 25, 43), iq1s_grid's are int8
// values (−1, 0, 1).

//go:generate go run gen_iqtables.go -o iq_grids_iq2.go iq2xxs_grid=iq2xxsGrid iq2xs_grid=iq2xsGrid iq2s_grid=iq2sGrid
//go:generate go run gen_iqtables.go -o iq_grids_iq1.go iq1s_grid=iq1sGrid
