package quant

// The sign table shared by ggml's IQ2 and IQ3 types: a 7-bit index stands for eight signs, the
// eighth being the parity of the other seven (ggml-common.h's ksigns_iq2xs; kmask_iq2xs is bit j
// itself, so no table here). Bit j set means element j of an eight-value group is negated.
//
//go:generate go run gen_iqtables.go -o iqsigns_table.go ksigns_iq2xs=ksignsIQ2XS

// iqSign returns −1 or 1 as ggml multiplies element j (0…7) of a group by its sign byte s.
func iqSign(s uint8, j int) float32 {
	if s>>j&1 != 0 {
		return -1
	}
	return 1
}
