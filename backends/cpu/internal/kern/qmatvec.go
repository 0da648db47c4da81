package kern

import (
	"encoding/binary"
	"math"
)

// Prepared Q8_0 activation rows for the Q4_0 mat-vec kernel of the avx512vnni set: 256 bytes per
// group of four blocks (see qmatvec512_amd64.s for the layout). Blocks past the last full group
// are not prepared; the caller dots them with dotQ4_0Q8_0.
const prepQ4x4Group = 256

// prepQ4x4Size is the number of bytes prepQ4x4 writes for nb blocks.
func prepQ4x4Size(nb int) int { return nb / 4 * prepQ4x4Group }

// prepQ4x4 prepares the full groups of four Q8_0 blocks of y (nb blocks) into dst.
func prepQ4x4(nb int, y, dst []byte) {
	for g := 0; g < nb/4; g++ {
		d := dst[g*prepQ4x4Group : (g+1)*prepQ4x4Group]
		for i := 0; i < 4; i++ {
			blk := y[(4*g+i)*BlockQ8_0Size : (4*g+i+1)*BlockQ8_0Size]
			q := blk[2:]
			copy(d[16*i:16*i+16], q[:16])
			copy(d[64+16*i:64+16*i+16], q[16:32])
			for l := 0; l < 4; l++ {
				var s int32
				for t := 0; t < 4; t++ {
					s += int32(int8(q[4*l+t])) + int32(int8(q[16+4*l+t]))
				}
				binary.LittleEndian.PutUint32(d[128+16*i+4*l:], uint32(-8*s))
			}
			dy := f16ToF32Go(binary.LittleEndian.Uint16(blk))
			for l := 0; l < 4; l++ {
				binary.LittleEndian.PutUint32(d[192+16*i+4*l:], math.Float32bits(dy))
			}
		}
	}
}
