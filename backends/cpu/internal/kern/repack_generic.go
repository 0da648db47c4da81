//go:build !amd64 || purego

package kern

// rpTile runs the repacked micro-kernel of the active kernel set (here the pure-Go twin).
func rpTile(rt RepackType, nr, nb int, w, p []byte, c []float32, ldc int, accum bool) {
	rpTileGo(rt, nr, nr, nb, w, p, c, ldc, accum)
}

// rpTilePart is rpTile for the first rows (≤ nr) activation rows of the tile only.
func rpTilePart(rt RepackType, nr, rows, nb int, w, p []byte, c []float32, ldc int, accum bool) {
	rpTileGo(rt, nr, rows, nb, w, p, c, ldc, accum)
}

// rpTile2 reports false: no two-group kernel in this build.
func rpTile2(rt RepackType, nb int, w []byte, gs int, p []byte, c []float32, ldc int, accum bool) bool {
	return false
}

// hasRepackASM reports whether rpTile runs assembly: never in this build.
func hasRepackASM() bool { return false }

// repackGroupFast reports false: no assembly in this build.
func repackGroupFast(f repackFormat, dst, a []byte, lda, kb, kn int) bool { return false }

// prepRec reports false: no assembly in this build (prepRepackRowGo writes the records).
func prepRec(rt RepackType, nb, nr, r int, y, p []byte) bool { return false }
