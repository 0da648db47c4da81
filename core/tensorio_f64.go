package core

import (
	"encoding/binary"
	"math"
)

// F64 has no row conversion in ggml's type traits (and none in tandem's: CanConvert is false, so
// no kernel treats it as a float type), but SetFloat32s and GetFloat32s still move values in and
// out of F64 tensors: float32 widens exactly, and float64 rounds to the nearest float32 on the way
// back.

// setF64 writes values into the F64 tensor t (checked by SetFloat32s), keeping the bytes between
// the elements of a view.
func setF64(t *Tensor, values []float32) error {
	if t.NElements() == 0 {
		return nil
	}
	raw := make([]byte, t.NBytes())
	if !t.IsContiguous() {
		if err := TensorGet(t, raw, 0); err != nil {
			return err
		}
	}
	i := 0
	forEachRow(t, func(off int64) {
		for i0 := int64(0); i0 < t.Ne[0]; i0++ {
			binary.LittleEndian.PutUint64(raw[off+i0*t.Nb[0]:], math.Float64bits(float64(values[i])))
			i++
		}
	})
	return TensorSet(t, raw, 0)
}

// getF64 reads the elements of the F64 tensor t from its bytes raw into out, row-major.
func getF64(t *Tensor, raw []byte, out []float32) {
	i := 0
	forEachRow(t, func(off int64) {
		for i0 := int64(0); i0 < t.Ne[0]; i0++ {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(raw[off+i0*t.Nb[0]:])))
			i++
		}
	})
}
