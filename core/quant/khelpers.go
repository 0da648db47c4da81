package quant

import (
	"encoding/binary"
	"math"
)

// groupMaxEps is ggml's GROUP_MAX_EPS: groups whose largest magnitude is below it count as zero.
const groupMaxEps = 1e-15

// nearestInt is ggml's nearest_int: it adds 1.5·2²³ in float32 and reads the low mantissa bits,
// which rounds half to even for |f| ≤ 4194303 (and wraps like ggml's outside that range).
func nearestInt(f float32) int32 {
	// float32(f) rounds the product callers pass, so it is not fused into this add (FMA).
	v := float32(f) + 12582912
	return int32(math.Float32bits(v)&0x007fffff) - 0x00400000
}

// toUint8 converts like C's (uint8_t) cast of an in-range float (truncation toward zero).
func toUint8(v float32) uint8 { return uint8(int32(v)) }

func clampInt(v, lo, hi int32) int32 { return max(lo, min(hi, v)) }

// maxWithSign returns the element of largest magnitude (first one on ties) with its sign, and
// its magnitude.
func maxWithSign(x []float32) (vmax, amax float32) {
	for _, v := range x {
		if av := abs32(v); av > amax {
			amax, vmax = av, v
		}
	}
	return vmax, amax
}

func putU16(b []byte, v uint16) { binary.LittleEndian.PutUint16(b, v) }
func getU16(b []byte) uint16    { return binary.LittleEndian.Uint16(b) }
func putU32(b []byte, v uint32) { binary.LittleEndian.PutUint32(b, v) }
func getU32(b []byte) uint32    { return binary.LittleEndian.Uint32(b) }

// makeQxQuants is ggml's make_qx_quants for qw = nil (symmetric scale search); it writes
// L in 0 … 2·nmax−1 and returns the scale.
func makeQxQuants(nmax int32, x []float32, L []int8, rmseType int) float32 {
	vmax, amax := maxWithSign(x)
	if amax < groupMaxEps {
		for i := range x {
			L[i] = 0
		}
		return 0
	}
	iscale := float32(-nmax) / vmax
	weight := func(v float32) float32 {
		switch rmseType {
		case 1:
			return v * v
		case 2:
			return 1
		case 3:
			return abs32(v)
		}
		return float32(math.Sqrt(float64(abs32(v))))
	}
	var sumlx, suml2 float32
	for i, v := range x {
		l := clampInt(nearestInt(iscale*v), -nmax, nmax-1)
		L[i] = int8(l + nmax)
		w := weight(v)
		sumlx += float32(float32(w*v) * float32(l))
		suml2 += float32(float32(w*float32(l)) * float32(l))
	}
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	for is := int32(-9); is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(float32(nmax) + float32(0.1*float32(is))) / vmax
		sumlx, suml2 = 0, 0
		for _, v := range x {
			l := clampInt(nearestInt(iscale*v), -nmax, nmax-1)
			w := weight(v)
			sumlx += float32(float32(w*v) * float32(l))
			suml2 += float32(float32(w*float32(l)) * float32(l))
		}
		if suml2 > 0 && float32(sumlx*sumlx) > float32(best*suml2) {
			for i, v := range x {
				L[i] = int8(nmax + clampInt(nearestInt(iscale*v), -nmax, nmax-1))
			}
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}

// makeQ3Quants is ggml's make_q3_quants with do_rmse: L in 0 … 2·nmax−1 (all 0 for a zero group).
func makeQ3Quants(nmax int32, x []float32, L []int8) float32 {
	vmax, amax := maxWithSign(x)
	if amax < groupMaxEps {
		for i := range x {
			L[i] = 0
		}
		return 0
	}
	iscale := float32(-nmax) / vmax
	var sumlx, suml2 float32
	for i, v := range x {
		l := clampInt(nearestInt(iscale*v), -nmax, nmax-1)
		L[i] = int8(l)
		w := v * v
		sumlx += float32(float32(w*v) * float32(l))
		suml2 += float32(float32(w*float32(l)) * float32(l))
	}
	for range 5 {
		changed := 0
		for i, v := range x {
			w := v * v
			li := float32(L[i])
			slx := sumlx - float32(float32(w*v)*li)
			if slx > 0 {
				sl2 := suml2 - float32(float32(w*li)*li)
				nl := clampInt(nearestInt(float32(v*sl2)/slx), -nmax, nmax-1)
				if nl != int32(L[i]) {
					fn := float32(nl)
					slx += float32(float32(w*v) * fn)
					sl2 += float32(float32(w*fn) * fn)
					if sl2 > 0 && float32(float32(slx*slx)*suml2) > float32(float32(sumlx*sumlx)*sl2) {
						L[i] = int8(nl)
						sumlx, suml2 = slx, sl2
						changed++
					}
				}
			}
		}
		if changed == 0 {
			break
		}
	}
	for i := range x {
		L[i] += int8(nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// makeQKX2Quants is ggml's make_qkx2_quants: an asymmetric (scale, min) search. It writes L in
// 0 … nmax, returns the scale and the_min (≥ 0, x ≈ scale·L − the_min). laux is scratch.
func makeQKX2Quants(nmax int32, x, w []float32, L, laux []uint8, rmin, rdelta float32, nstep int, useMad bool) (scale, theMin float32) {
	n := len(x)
	vmin, vmax := x[0], x[0]
	sumW := w[0]
	sumX := sumW * x[0]
	for i := 1; i < n; i++ {
		if x[i] < vmin {
			vmin = x[i]
		}
		if x[i] > vmax {
			vmax = x[i]
		}
		sumW += w[i]
		sumX += float32(w[i] * x[i])
	}
	if vmin > 0 {
		vmin = 0
	}
	if vmax == vmin {
		for i := range n {
			L[i] = 0
		}
		return 0, -vmin
	}
	errOf := func(diff float32) float32 {
		if useMad {
			return abs32(diff)
		}
		return diff * diff
	}
	iscale := float32(nmax) / (vmax - vmin)
	scale = 1 / iscale
	var bestErr float32
	for i := range n {
		l := clampInt(nearestInt(iscale*(x[i]-vmin)), 0, nmax)
		L[i] = uint8(l)
		diff := float32(float32(scale*float32(l))+vmin) - x[i]
		bestErr += float32(w[i] * errOf(diff))
	}
	if nstep < 1 {
		return scale, -vmin
	}
	for is := 0; is <= nstep; is++ {
		iscale = float32(float32(rmin+float32(rdelta*float32(is)))+float32(nmax)) / (vmax - vmin)
		var sumL, sumL2, sumXL float32
		for i := range n {
			l := clampInt(nearestInt(iscale*(x[i]-vmin)), 0, nmax)
			laux[i] = uint8(l)
			fl := float32(l)
			sumL += float32(w[i] * fl)
			sumL2 += float32(float32(w[i]*fl) * fl)
			sumXL += float32(float32(w[i]*fl) * x[i])
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if D > 0 {
			thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
			thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var curErr float32
			for i := range n {
				diff := float32(float32(thisScale*float32(laux[i]))+thisMin) - x[i]
				curErr += float32(w[i] * errOf(diff))
			}
			if curErr < bestErr {
				copy(L[:n], laux[:n])
				bestErr = curErr
				scale = thisScale
				vmin = thisMin
			}
		}
	}
	return scale, -vmin
}

// getScaleMinK4 unpacks the 6-bit scale and min of sub-block j from Q4_K/Q5_K's 12 scale bytes.
func getScaleMinK4(j int, s []byte) (sc, m uint8) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return (s[j+4] & 0xF) | ((s[j-4] >> 6) << 4), (s[j+4] >> 4) | ((s[j] >> 6) << 4)
}

// bestIndexInt8 is ggml's best_index_int8 over the ascending table val (ties go up).
func bestIndexInt8(val *[16]int8, x float32) int {
	x = float32(x) // round a product passed in before it meets the subtractions below (no FMA)
	if x <= float32(val[0]) {
		return 0
	}
	if x >= float32(val[15]) {
		return 15
	}
	lo, hi := 0, 15
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if x < float32(val[mid]) {
			hi = mid
		} else {
			lo = mid
		}
	}
	if x-float32(val[lo]) < float32(val[hi])-x {
		return lo
	}
	return hi
}
