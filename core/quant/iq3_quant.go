package quant

import (
	"math"
	"sync"
)

// The reference quantizers of IQ3_XXS and IQ3_S (ggml's quantize_row_iq3_xxs_ref and
// quantize_row_iq3_s_ref, no importance weights). ggml's CPU backend has no from_float for these
// types (its quantizers need ggml_quantize_init's grid maps), so tandem does not quantize into
// them in CPY or SET_ROWS either; these functions are for writing weights offline.

// iq3Table is ggml's iq3_data entry for one grid: the grid as int8 values 2l+1 (l = 0…7), the
// map from a 12-bit point (three bits per element) to its grid index, and, for points off the
// grid, -(offset+1) into neighbours, where neighbours[offset] counts the grid indices that
// follow (those at the nwant smallest squared distances, by distance then index).
type iq3Table struct {
	grid       [][4]int8
	kmap       [4096]int32
	neighbours []uint16
}

var (
	iq3XXSTableOnce, iq3STableOnce sync.Once
	iq3XXSTable, iq3STable         *iq3Table
)

// iq3Tables returns the table of the 256-entry (IQ3_XXS) or 512-entry (IQ3_S) grid, built on
// first use as ggml's iq3xs_init_impl does. The grid points come from the decoding grids: a
// byte b of iq3xxs_grid is level (b−4)/8, one of iq3s_grid (b−1)/2.
func iq3Tables(s bool) *iq3Table {
	if s {
		iq3STableOnce.Do(func() {
			iq3STable = newIQ3Table(iq3sGrid[:], func(b uint8) int8 { return int8(b-1) / 2 }, 3)
		})
		return iq3STable
	}
	iq3XXSTableOnce.Do(func() {
		iq3XXSTable = newIQ3Table(iq3xxsGrid[:], func(b uint8) int8 { return int8(b-4) / 8 }, 2)
	})
	return iq3XXSTable
}

func newIQ3Table(dec [][4]uint8, level func(uint8) int8, nwant int) *iq3Table {
	t := &iq3Table{grid: make([][4]int8, len(dec))}
	for i := range t.kmap {
		t.kmap[i] = -1
	}
	for k, g := range dec {
		u := 0
		for i := range 4 {
			l := level(g[i])
			t.grid[k][i] = 2*l + 1
			u |= int(l) << (3 * i)
		}
		t.kmap[u] = int32(k)
	}
	d2s := make([]int, len(dec))
	for u := range t.kmap {
		if t.kmap[u] >= 0 {
			continue
		}
		for j, g := range t.grid {
			d2 := 0
			for k := range 4 {
				d := int(g[k]) - (2*(u>>(3*k)&7) + 1)
				d2 += d * d
			}
			d2s[j] = d2
		}
		// ggml sorts (distance, index) pairs and keeps those at the nwant smallest distances:
		// the same list is every index at each of those distances in turn, in index order.
		t.kmap[u] = -int32(len(t.neighbours)) - 1
		start := len(t.neighbours)
		t.neighbours = append(t.neighbours, 0)
		last := -1
		for range nwant {
			next := math.MaxInt
			for _, d2 := range d2s {
				if d2 > last && d2 < next {
					next = d2
				}
			}
			for j, d2 := range d2s {
				if d2 == next {
					t.neighbours = append(t.neighbours, uint16(j))
				}
			}
			last = next
		}
		t.neighbours[start] = uint16(len(t.neighbours) - start - 1)
	}
	return t
}

// bestNeighbour is ggml's iq3_find_best_neighbour: among the neighbours of the off-grid point u,
// the grid entry with the least Σ w·(scale·q − x)² (the first on ties); it writes the entry's
// levels into l and returns its index. Where no distance is below FLT_MAX (non-finite data)
// ggml aborts; here the first neighbour is taken.
func (t *iq3Table) bestNeighbour(u int, x, w []float32, scale float32, l []int8) int {
	nb := t.neighbours[-t.kmap[u]-1:]
	best, bestD2 := int(nb[1]), float32(math.MaxFloat32)
	for _, j := range nb[1 : 1+int(nb[0])] {
		var d2 float32
		for i := range 4 {
			diff := float32(scale*float32(t.grid[j][i])) - x[i]
			d2 += float32(float32(w[i]*diff) * diff)
		}
		if d2 < bestD2 {
			bestD2, best = d2, int(j)
		}
	}
	for i := range 4 {
		l[i] = (t.grid[best][i] - 1) / 2
	}
	return best
}

// iq3Point is the 12-bit point of four levels.
func iq3Point(l []int8) int {
	u := 0
	for i := range 4 {
		u |= int(l[i]) << (3 * i)
	}
	return u
}

// iq3Levels rounds four magnitudes at inverse scale id to levels 0…7 as ggml does.
func iq3Levels(x []float32, id float32, l []int8) {
	for i := range 4 {
		l[i] = int8(clampInt(nearestInt(0.5*(float32(id*x[i])-1)), 0, 7))
	}
}

// iq3Sums returns Σ w·x·q and Σ w·q² over a group of levels (q = 2l+1).
func iq3Sums(w, x *[32]float32, l *[32]int8) (sumqx, sumq2 float32) {
	for i := range 32 {
		q := float32(2*int32(l[i]) + 1)
		sumqx += float32(float32(w[i]*x[i]) * q)
		sumq2 += float32(float32(w[i]*q) * q)
	}
	return sumqx, sumq2
}

// iq3Search is the scale search both quantizers run on a group of 32 magnitudes x (maximum m)
// with weights w = x² (waux = |x|): ggml's loop over id = (15 + 0.2·is)/m for is in
// −isMax…isMax, snapping each four values to the grid or its best neighbour, keeping the levels
// of the best Σwxq²/Σwq²; then groups that were off the grid (all groups when redoAll, IQ3_S's
// rule) are snapped again at the chosen scale and the scale refitted. It leaves the levels in l
// and returns the scale.
func (t *iq3Table) search(x, w, waux *[32]float32, m float32, isMax int, onGridInit, redoAll bool, l *[32]int8) float32 {
	var laux [32]int8
	var onGrid, onGridAux [8]bool
	for k := range onGrid {
		onGrid[k] = onGridInit
	}
	*l = [32]int8{}
	var best float32
	scale := m / 15
	for is := -isMax; is <= isMax; is++ {
		id := (15 + float32(float32(is)*0.2)) / m
		thisScale := 1 / id
		for k := range 8 {
			iq3Levels(x[4*k:4*k+4], id, laux[4*k:4*k+4])
			u := iq3Point(laux[4*k : 4*k+4])
			onGridAux[k] = t.kmap[u] >= 0
			if !onGridAux[k] {
				t.bestNeighbour(u, x[4*k:4*k+4], waux[4*k:4*k+4], thisScale, laux[4*k:4*k+4])
			}
		}
		sumqx, sumq2 := iq3Sums(w, x, &laux)
		if sumq2 > 0 && sumqx*sumqx > best*sumq2 {
			scale = sumqx / sumq2
			best = scale * sumqx
			*l, onGrid = laux, onGridAux
		}
	}
	off := false
	for _, on := range onGrid {
		off = off || !on
	}
	if off && scale > 0 {
		id := 1 / scale
		for k := range 8 {
			if onGrid[k] && !redoAll {
				continue
			}
			lk := l[4*k : 4*k+4]
			iq3Levels(x[4*k:4*k+4], id, lk)
			u := iq3Point(lk)
			g := int(t.kmap[u])
			if g < 0 {
				g = t.bestNeighbour(u, x[4*k:4*k+4], waux[4*k:4*k+4], scale, lk)
			}
			for i := range 4 {
				lk[i] = (t.grid[g][i] - 1) / 2
			}
		}
		if sumqx, sumq2 := iq3Sums(w, x, l); sumq2 > 0 {
			scale = sumqx / sumq2
		}
	}
	return scale
}

// index returns the grid index of four levels; the search only leaves points on the grid
// (ggml aborts otherwise).
func (t *iq3Table) index(l []int8) int {
	g := t.kmap[iq3Point(l)]
	if g < 0 {
		panic("quant: IQ3 levels off the grid (unreachable: the search snaps every group to it)")
	}
	return int(g)
}

// iq3Group prepares a group of 32 values as both quantizers do: magnitudes, weights x² and
// their square roots, the sign bits of each eight values.
func iq3Group(xb []float32, x, w, waux *[32]float32, signs *[4]uint8) {
	for i := range 32 {
		w[i] = xb[i] * xb[i]
		waux[i] = float32(math.Sqrt(float64(w[i])))
	}
	for k := range 4 {
		var s uint8
		for i := range 8 {
			v := xb[8*k+i]
			if v >= 0 {
				x[8*k+i] = v
			} else {
				x[8*k+i] = -v
				s |= 1 << i
			}
		}
		signs[k] = s
	}
}

// iq3Max is the largest of the 32 magnitudes as C's MAX in order (a NaN propagates as ggml's).
func iq3Max(x *[32]float32) float32 {
	m := x[0]
	for _, v := range x[1:] {
		if !(m > v) {
			m = v
		}
	}
	return m
}

// QuantizeRowIQ3_XXS quantizes x into IQ3_XXS blocks in dst as ggml's quantize_row_iq3_xxs_ref:
// per group of 32 the signs of each eight values are made even (the smallest w·x² flips when
// their count is odd) and kept as a 7-bit index, the magnitudes snapped to the 256-entry grid by
// iq3Search (scales 15 ± 0.2·is over is = −15…15), groups under 1e−8 left zero; d is the largest
// group scale /31 times 1.0125, each group's 4-bit scale rounds scale/d. An all-zero super-block
// is zero bytes. len(x) must be a multiple of QK_K and dst must hold the blocks; otherwise it
// panics.
func QuantizeRowIQ3_XXS(x []float32, dst []byte) {
	nb := blocks("QuantizeRowIQ3_XXS", len(x), QK_K, BlockIQ3_XXSSize, len(dst), "dst")
	t := iq3Tables(false)
	var xv, w, waux [32]float32
	var l [32]int8
	var signs [4]uint8
	var scales [QK_K / 32]float32
	for ibl := range nb {
		blk := (*[BlockIQ3_XXSSize]byte)(dst[ibl*BlockIQ3_XXSSize:])
		*blk = [BlockIQ3_XXSSize]byte{}
		var maxScale float32
		for ib := range QK_K / 32 {
			iq3Group(x[ibl*QK_K+32*ib:], &xv, &w, &waux, &signs)
			for k := range 4 {
				s := signs[k]
				if n := popcount8(s); n%2 == 1 {
					imin, vmin := 0, float32(w[8*k]*x[ibl*QK_K+32*ib+8*k])*x[ibl*QK_K+32*ib+8*k]
					for i := 1; i < 8; i++ {
						xi := x[ibl*QK_K+32*ib+8*k+i]
						if ax := float32(w[8*k+i]*xi) * xi; ax < vmin {
							vmin, imin = ax, i
						}
					}
					xv[8*k+imin] = -xv[8*k+imin]
					s ^= 1 << imin
				}
				signs[k] = s & 127
			}
			m := iq3Max(&xv)
			if m < 1e-8 {
				scales[ib] = 0
				continue
			}
			scale := t.search(&xv, &w, &waux, m, 15, true, false, &l)
			if scale < 0 {
				scale = -scale
				for k := range signs {
					signs[k] = ^signs[k] & 127
				}
			}
			for k := range 8 {
				blk[2+8*ib+k] = uint8(t.index(l[4*k : 4*k+4]))
			}
			putU32(blk[2+QK_K/4+4*ib:], uint32(signs[0])|uint32(signs[1])<<7|uint32(signs[2])<<14|uint32(signs[3])<<21)
			scales[ib] = scale
			if !(maxScale > scale) {
				maxScale = scale
			}
		}
		if maxScale == 0 {
			*blk = [BlockIQ3_XXSSize]byte{}
			continue
		}
		ls := iq3ScaleCodes(blk[0:2], maxScale, 1.0125, &scales)
		for ib := range QK_K / 32 {
			o := 2 + QK_K/4 + 4*ib
			putU32(blk[o:], getU32(blk[o:])|uint32(ls[ib])<<28)
		}
	}
}

// QuantizeRowIQ3_S quantizes x into IQ3_S blocks in dst as ggml's quantize_row_iq3_s_ref: per
// group of 32 the signs are kept as bits, the magnitudes snapped to the 512-entry grid by
// iq3Search (scales 15 ± 0.2·is over is = −9…9, every group snapped again at the chosen scale
// when one was off the grid); d is the largest group scale /31 times 1.033, each group's 4-bit
// scale rounds (scale/d − 1)/2. An all-zero group writes nothing and, as in ggml, the grid
// indices and signs of the groups after it move up into its slots (their high index bits stay
// at their own group's byte), so such a block decodes shifted, bit for bit as ggml's. An all-zero
// super-block is zero bytes.
// len(x) must be a multiple of QK_K and dst must hold the blocks; otherwise it panics.
func QuantizeRowIQ3_S(x []float32, dst []byte) {
	nb := blocks("QuantizeRowIQ3_S", len(x), QK_K, BlockIQ3_SSize, len(dst), "dst")
	const qsOff, qhOff, sgOff, scOff = 2, 2 + QK_K/4, 2 + QK_K/4 + QK_K/32, 2 + QK_K/4 + QK_K/32 + QK_K/8
	t := iq3Tables(true)
	var xv, w, waux [32]float32
	var l [32]int8
	var signs [4]uint8
	var scales [QK_K / 32]float32
	for ibl := range nb {
		blk := (*[BlockIQ3_SSize]byte)(dst[ibl*BlockIQ3_SSize:])
		*blk = [BlockIQ3_SSize]byte{}
		var maxScale float32
		gq := 0 // groups written: ggml advances its qs and signs pointers past non-zero groups only
		for ib := range QK_K / 32 {
			iq3Group(x[ibl*QK_K+32*ib:], &xv, &w, &waux, &signs)
			m := iq3Max(&xv)
			if m == 0 {
				scales[ib] = 0
				continue
			}
			scale := t.search(&xv, &w, &waux, m, 9, false, true, &l)
			if scale < 0 {
				scale = -scale
				for k := range signs {
					signs[k] = ^signs[k]
				}
			}
			for k := range 8 {
				g := t.index(l[4*k : 4*k+4])
				blk[qsOff+8*gq+k] = uint8(g)
				blk[qhOff+ib] |= uint8(g>>8) << k
			}
			copy(blk[sgOff+4*gq:], signs[:])
			gq++
			scales[ib] = scale
			if !(maxScale > scale) {
				maxScale = scale
			}
		}
		if maxScale == 0 {
			continue
		}
		ls := iq3ScaleCodes(blk[0:2], maxScale, 1.033, &scales)
		for ib := 0; ib < QK_K/32; ib += 2 {
			blk[scOff+ib/2] = ls[ib] | ls[ib+1]<<4
		}
	}
}

// iq3ScaleCodes writes the super-block scale d = maxScale/31·fudge (f16) into dh and returns
// each group's 4-bit code, (scale·31/maxScale − 1)/2 rounded as ggml's nearest_int, in 0…15.
func iq3ScaleCodes(dh []byte, maxScale, fudge float32, scales *[QK_K / 32]float32) (ls [QK_K / 32]uint8) {
	d := maxScale / 31
	putF16(dh, d*fudge)
	id := 1 / d
	for ib, sc := range scales {
		ls[ib] = uint8(clampInt(nearestInt(0.5*(float32(id*sc)-1)), 0, 15))
	}
	return ls
}

func popcount8(s uint8) int {
	n := 0
	for ; s != 0; s &= s - 1 {
		n++
	}
	return n
}
