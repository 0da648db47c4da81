package core

import (
	"math"
)

// Image and vision-transformer ops: GROUP_NORM, UPSCALE (ggml_upscale, ggml_upscale_ext,
// ggml_interpolate) and SAM's window partition and relative positions (WIN_PART, WIN_UNPART,
// GET_REL_POS, ADD_REL_POS), with ggml's shapes and op_params. ggml's backward has no gradient for
// any of them.

// GroupNorm normalizes a over groups of channels (ggml_group_norm): dimension 2 (the channels) is
// cut into nGroups groups of ⌈ne2/nGroups⌉ channels (the last ones may be short or empty), and for
// each group and each index of dimension 3 the elements of those channels (ne0·ne1 each) become
// (x - mean) / sqrt(var + eps), var the population variance. a must be f32 with unit stride along
// dim 0; the result is a's shape, contiguous. nGroups ≥ 1, eps a finite number ≥ 0. op_params:
// i[0] nGroups, f[1] eps. A nil operand (or a nil context) records an error on the context and
// returns a placeholder.
func (c *Context) GroupNorm(a *Tensor, nGroups int, eps float32) *Tensor {
	return c.groupNorm(a, nGroups, eps, false)
}

// GroupNormInplace is GroupNorm writing into a's memory (ggml_group_norm_inplace): the result is a
// view of a with a's strides. A nil operand (or a nil context) records an error on the context and
// returns a placeholder.
func (c *Context) GroupNormInplace(a *Tensor, nGroups int, eps float32) *Tensor {
	return c.groupNorm(a, nGroups, eps, true)
}

func (c *Context) groupNorm(a *Tensor, nGroups int, eps float32, inplace bool) *Tensor {
	if err := c.check("GROUP_NORM", a); err != nil {
		return c.fail("GROUP_NORM", err)
	}
	switch {
	case a.Type != TypeF32:
		return c.errorf("GROUP_NORM: %v has type %v, want f32", a, a.Type)
	case a.Nb[0] != 4 && a.Ne[0] > 1:
		return c.errorf("GROUP_NORM: %v must have unit stride along dim 0", a)
	case nGroups < 1 || nGroups > math.MaxInt32:
		return c.errorf("GROUP_NORM: %d groups, want 1 ≤ groups < 2^31", nGroups)
	case !(eps >= 0) || math.IsInf(float64(eps), 1):
		return c.errorf("GROUP_NORM: eps %v, want a finite number ≥ 0", eps)
	}
	var t *Tensor
	if inplace {
		t = c.inplaceOp(OpGroupNorm, a)
	} else {
		t = c.newOp(OpGroupNorm, TypeF32, a.Ne, a)
	}
	if t.err != nil {
		return t
	}
	t.Params[0] = int32(nGroups)
	t.SetParamF32(1, eps)
	return t
}

// GroupNormParamsOf returns the number of groups and eps of a GROUP_NORM node (zeros for a nil t
// or another op).
func GroupNormParamsOf(t *Tensor) (nGroups int, eps float32) {
	if t == nil || t.Op != OpGroupNorm {
		return 0, 0
	}
	return int(t.Params[0]), t.ParamF32(1)
}

// ScaleMode is UPSCALE's interpolation (ggml's enum ggml_scale_mode) in its low byte, with
// ScaleFlag bits above.
type ScaleMode uint32

// Interpolation modes and flags (ggml's values).
const (
	ScaleNearest  ScaleMode = 0
	ScaleBilinear ScaleMode = 1
	ScaleBicubic  ScaleMode = 2

	// ScaleAlignCorners maps the corner pixels of input and output onto each other (PyTorch's
	// align_corners=True): bilinear and bicubic sample at i·(in-1)/(out-1), and nearest uses that
	// factor too.
	ScaleAlignCorners ScaleMode = 1 << 8
	// ScaleAntialias (bilinear only) averages every input pixel under a triangle filter as wide as
	// the downscaling factor (PyTorch's antialias=True); upscaling equals plain bilinear away from
	// the borders.
	ScaleAntialias ScaleMode = 1 << 9
)

// Mode returns the interpolation without flags.
func (m ScaleMode) Mode() ScaleMode { return m & 0xFF }

// Upscale multiplies dims 0 and 1 of a by factor > 1 (ggml_upscale), interpolating with mode. A nil
// operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Upscale(a *Tensor, factor int, mode ScaleMode) *Tensor {
	if err := c.check("UPSCALE", a); err != nil {
		return c.fail("UPSCALE", err)
	}
	if factor <= 1 || factor > math.MaxInt32 {
		return c.errorf("UPSCALE: scale factor %d, want 1 < factor < 2^31", factor)
	}
	ne0, ok0 := CheckedMul(a.Ne[0], int64(factor))
	ne1, ok1 := CheckedMul(a.Ne[1], int64(factor))
	if !ok0 || !ok1 {
		return c.errorf("UPSCALE: %v times %d overflows", a, factor)
	}
	return c.Interpolate(a, ne0, ne1, a.Ne[2], a.Ne[3], mode)
}

// UpscaleExt resizes a to ne0×ne1×ne2×ne3 (ggml_upscale_ext, the older name of Interpolate). A nil
// operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) UpscaleExt(a *Tensor, ne0, ne1, ne2, ne3 int, mode ScaleMode) *Tensor {
	return c.Interpolate(a, int64(ne0), int64(ne1), int64(ne2), int64(ne3), mode)
}

// Interpolate resizes a to ne0×ne1×ne2×ne3, up or down, in each dimension independently
// (ggml_interpolate): dims 0 and 1 are sampled with mode (nearest, bilinear, bicubic; with the
// ScaleAlignCorners and, for bilinear, ScaleAntialias flags), dims 2 and 3 always by nearest
// index (i·in/out truncated). With pixel centres (no align corners) an output pixel i samples the
// input at (i + 0.5)·in/out - 0.5; bilinear clamps its two taps to the input, bicubic (a = -0.75,
// as PyTorch) its four, both replicating the border. a must be f32 (any strides); sizes ≥ 0.
// op_params: i[0] the mode with its flags. A nil operand (or a nil context) records an error on
// the context and returns a placeholder.
func (c *Context) Interpolate(a *Tensor, ne0, ne1, ne2, ne3 int64, mode ScaleMode) *Tensor {
	if err := c.check("UPSCALE", a); err != nil {
		return c.fail("UPSCALE", err)
	}
	switch {
	case a.Type != TypeF32:
		return c.errorf("UPSCALE: %v has type %v, want f32", a, a.Type)
	case mode.Mode() > ScaleBicubic || mode&^(0xFF|ScaleAlignCorners|ScaleAntialias) != 0:
		return c.errorf("UPSCALE: mode %#x, want nearest (0), bilinear (1) or bicubic (2) with flags align corners (0x100) or antialias (0x200)", uint32(mode))
	case mode&ScaleAntialias != 0 && mode.Mode() != ScaleBilinear:
		return c.errorf("UPSCALE: antialias (mode %#x) needs bilinear interpolation", uint32(mode))
	case ne0 < 0 || ne1 < 0 || ne2 < 0 || ne3 < 0:
		return c.errorf("UPSCALE: sizes %d, %d, %d, %d, want ≥ 0", ne0, ne1, ne2, ne3)
	}
	t := c.newOp(OpUpscale, TypeF32, [4]int64{ne0, ne1, ne2, ne3}, a)
	if t.err != nil {
		return t
	}
	t.Params[0] = int32(mode)
	return t
}

// ScaleModeOf returns the mode and flags of an UPSCALE node (0 for a nil t or another op).
func ScaleModeOf(t *Tensor) ScaleMode {
	if t == nil || t.Op != OpUpscale {
		return 0
	}
	return ScaleMode(uint32(t.Params[0]))
}

// WinPart cuts a [C, W, H] image into w×w windows (ggml_win_part, SAM's window partition): W and H
// are padded with zeros up to multiples of w, and the result [C, w, w, npx·npy] holds window
// (px, py) at index py·npx + px, npx = ⌈W/w⌉, npy = ⌈H/w⌉. a must be contiguous f32 with ne3 = 1
// (ggml reads it as dense); w ≥ 1. op_params: i[0] npx, i[1] npy, i[2] w. A nil operand (or a nil
// context) records an error on the context and returns a placeholder.
func (c *Context) WinPart(a *Tensor, w int) *Tensor {
	if err := c.check("WIN_PART", a); err != nil {
		return c.fail("WIN_PART", err)
	}
	switch {
	case a.Type != TypeF32:
		return c.errorf("WIN_PART: %v has type %v, want f32", a, a.Type)
	case !a.IsContiguous():
		return c.errorf("WIN_PART: %v must be contiguous", a)
	case a.Ne[3] != 1:
		return c.errorf("WIN_PART: %v must have ne3 = 1", a)
	case w < 1 || w > math.MaxInt32/2 || a.Ne[1] > math.MaxInt32/2 || a.Ne[2] > math.MaxInt32/2:
		return c.errorf("WIN_PART: window %d of %v, want 1 ≤ w and sizes < 2^30", w, a)
	}
	npx := (a.Ne[1] + int64(w) - 1) / int64(w)
	npy := (a.Ne[2] + int64(w) - 1) / int64(w)
	np, ok := CheckedMul(npx, npy)
	if !ok || np > math.MaxInt32 {
		return c.errorf("WIN_PART: %d×%d windows of %v", npx, npy, a)
	}
	t := c.newOp(OpWinPart, TypeF32, [4]int64{a.Ne[0], int64(w), int64(w), np}, a)
	if t.err != nil {
		return t
	}
	t.Params[0], t.Params[1], t.Params[2] = int32(npx), int32(npy), int32(w)
	return t
}

// WinUnpart joins w×w windows back into a [C, w0, h0] image (ggml_win_unpart), dropping the
// padding WinPart added: a [C, w, w, ≥npx·npy] holds window (px, py) at index py·npx + px,
// npx = ⌈w0/w⌉, npy = ⌈h0/w⌉. a must be contiguous f32 with ne1 = ne2 = w; w, w0, h0 ≥ 1.
// op_params: i[0] w. A nil operand (or a nil context) records an error on the context and returns
// a placeholder.
func (c *Context) WinUnpart(a *Tensor, w0, h0, w int) *Tensor {
	if err := c.check("WIN_UNPART", a); err != nil {
		return c.fail("WIN_UNPART", err)
	}
	switch {
	case a.Type != TypeF32:
		return c.errorf("WIN_UNPART: %v has type %v, want f32", a, a.Type)
	case !a.IsContiguous():
		return c.errorf("WIN_UNPART: %v must be contiguous", a)
	case w < 1 || w0 < 1 || h0 < 1 || w > math.MaxInt32/2 || w0 > math.MaxInt32/2 || h0 > math.MaxInt32/2:
		return c.errorf("WIN_UNPART: window %d, image %d×%d, want each in [1, 2^30)", w, w0, h0)
	case a.Ne[1] != int64(w) || a.Ne[2] != int64(w):
		return c.errorf("WIN_UNPART: %v does not hold %d×%d windows (ne1 and ne2 must be %d)", a, w, w, w)
	}
	npx := (int64(w0) + int64(w) - 1) / int64(w)
	npy := (int64(h0) + int64(w) - 1) / int64(w)
	if np, ok := CheckedMul(npx, npy); !ok || a.Ne[3] < np {
		return c.errorf("WIN_UNPART: %v holds %d windows, want at least %d×%d for a %d×%d image", a, a.Ne[3], npx, npy, w0, h0)
	}
	t := c.newOp(OpWinUnpart, TypeF32, [4]int64{a.Ne[0], int64(w0), int64(h0), 1}, a)
	if t.err != nil {
		return t
	}
	t.Params[0] = int32(w)
	return t
}

// WinParams returns the window size w and, for WIN_PART, the windows per row npx and per column
// npy of a WIN_PART or WIN_UNPART node (for WIN_UNPART npx and npy follow from its shape); zeros
// for a nil t or another op.
func WinParams(t *Tensor) (npx, npy, w int) {
	switch {
	case t == nil:
		return 0, 0, 0
	case t.Op == OpWinPart:
		return int(t.Params[0]), int(t.Params[1]), int(t.Params[2])
	case t.Op == OpWinUnpart && t.Params[0] > 0:
		w = int(t.Params[0])
		return int((t.Ne[1] + int64(w) - 1) / int64(w)), int((t.Ne[2] + int64(w) - 1) / int64(w)), w
	}
	return 0, 0, 0
}

// WinShapesAgree reports whether a WIN_PART or WIN_UNPART node's parameters fit its shape and its
// source's as the constructors make them (backends check it before trusting a node built by
// hand); false for a nil t, another op or a missing source.
func WinShapesAgree(t *Tensor) bool {
	if t == nil || t.Src[0] == nil {
		return false
	}
	a := t.Src[0]
	npx, npy, w := WinParams(t)
	if w < 1 || npx < 1 || npy < 1 || a.Ne[0] != t.Ne[0] {
		return false
	}
	w64, np := int64(w), int64(npx)*int64(npy)
	switch t.Op {
	case OpWinPart:
		return t.Ne[1] == w64 && t.Ne[2] == w64 && t.Ne[3] == np && a.Ne[3] == 1 &&
			(a.Ne[1]+w64-1)/w64 == int64(npx) && (a.Ne[2]+w64-1)/w64 == int64(npy)
	case OpWinUnpart:
		return a.Ne[1] == w64 && a.Ne[2] == w64 && a.Ne[3] >= np && t.Ne[3] == 1
	}
	return false
}

// GetRelPos gathers SAM's relative position embeddings (ggml_get_rel_pos): a [C, 2·qh-1] f16
// table gives the f16 result [C, kh, qh] whose row (k, q) is a's row (kh-1-k) + q. qh must equal
// kh and a's ne1 be 2·qh-1; a must be contiguous f16 (ggml reads its first plane as dense rows).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) GetRelPos(a *Tensor, qh, kh int) *Tensor {
	if err := c.check("GET_REL_POS", a); err != nil {
		return c.fail("GET_REL_POS", err)
	}
	switch {
	case a.Type != TypeF16:
		return c.errorf("GET_REL_POS: %v has type %v, want f16", a, a.Type)
	case !a.IsContiguous():
		return c.errorf("GET_REL_POS: %v must be contiguous", a)
	case qh != kh || qh < 1 || qh > math.MaxInt32/4:
		return c.errorf("GET_REL_POS: qh %d and kh %d, want them equal and ≥ 1", qh, kh)
	case a.Ne[1] != int64(2*qh-1):
		return c.errorf("GET_REL_POS: %v has %d rows, want 2·%d-1 = %d", a, a.Ne[1], qh, 2*qh-1)
	}
	return c.newOp(OpGetRelPos, TypeF16, [4]int64{a.Ne[0], int64(kh), int64(qh), 1}, a)
}

// AddRelPos adds SAM's decomposed relative position terms to attention scores (ggml_add_rel_pos):
// a [k·k, q, heads] (k = pw's ne0, q = pw's ne1·ne2) gets ph[r, kh] + pw[r, kw] in column kh·k + kw
// of its row r = i1 + q·i2, pw and ph being [k, ne11, ne12, heads] (row r of their flattened
// rows). a, pw and ph must be contiguous f32, pw and ph of one shape, pw's ne0² = a's ne0,
// ne1·ne2 = a's ne1 and ne3 = a's ne2 (planes of a past its first ne3 are copied unchanged, as
// ggml). The two terms are added in ggml's order: the one of the smaller index first, ph's on a tie.
// op_params: i[0] inplace. A nil operand (or a nil context) records an error on the context and
// returns a placeholder.
func (c *Context) AddRelPos(a, pw, ph *Tensor) *Tensor { return c.addRelPos(a, pw, ph, false) }

// AddRelPosInplace is AddRelPos writing into a's memory (ggml_add_rel_pos_inplace): the result is
// a view of a. A nil operand (or a nil context) records an error on the context and returns a
// placeholder.
func (c *Context) AddRelPosInplace(a, pw, ph *Tensor) *Tensor { return c.addRelPos(a, pw, ph, true) }

func (c *Context) addRelPos(a, pw, ph *Tensor, inplace bool) *Tensor {
	if err := c.check("ADD_REL_POS", a, pw, ph); err != nil {
		return c.fail("ADD_REL_POS", err)
	}
	switch {
	case a.Type != TypeF32 || pw.Type != TypeF32 || ph.Type != TypeF32:
		return c.errorf("ADD_REL_POS: %v, %v and %v must be f32", a, pw, ph)
	case pw.Ne != ph.Ne:
		return c.errorf("ADD_REL_POS: %v and %v must have one shape", pw, ph)
	case !a.IsContiguous() || !pw.IsContiguous() || !ph.IsContiguous():
		return c.errorf("ADD_REL_POS: %v, %v and %v must be contiguous", a, pw, ph)
	case pw.Ne[3] != a.Ne[2]:
		return c.errorf("ADD_REL_POS: %v has ne3 %d, want %v's ne2 %d", pw, pw.Ne[3], a, a.Ne[2])
	case pw.Ne[0] > math.MaxInt32 || pw.Ne[0]*pw.Ne[0] != a.Ne[0]:
		return c.errorf("ADD_REL_POS: %v's ne0 squared must be %v's ne0", pw, a)
	case pw.Ne[1] > math.MaxInt32 || pw.Ne[2] > math.MaxInt32 || pw.Ne[1]*pw.Ne[2] != a.Ne[1]:
		return c.errorf("ADD_REL_POS: %v's ne1·ne2 must be %v's ne1", pw, a)
	}
	var t *Tensor
	if inplace {
		t = c.inplaceOp(OpAddRelPos, a)
	} else {
		t = c.newOp(OpAddRelPos, TypeF32, a.Ne, a)
	}
	if t.err != nil {
		return t
	}
	t.Src[1], t.Src[2] = pw, ph
	if inplace {
		t.Params[0] = 1
	}
	return t
}
