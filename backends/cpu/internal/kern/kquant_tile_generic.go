//go:build !amd64 || purego

package kern

// kernels: no tile kernels here; the driver computes one row dot per pair.
func (s *kTileSpec) kernels() (k1, k4 kTileKernel, prep kTilePrep) {
	return nil, nil, nil
}

// kTileAsm: no assembly kernels in this build.
type kTileAsm struct{}

type kTileKernel = func(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)

// hasBMI2: no IQ4_XS tile kernels here either way.
const hasBMI2 = false
