//go:build amd64 && !purego

package kern

// rpTile runs the repacked micro-kernel of the active kernel set on nr activation rows of the
// prepared tile p and the 16 weight rows of w (nb blocks each): c[j*ldc+r] (+)= the dots.
func rpTile(rt RepackType, nr, nb int, w, p []byte, c []float32, ldc int, accum bool) {
	rpTileGo(rt, nr, nb, w, p, c, ldc, accum)
}
