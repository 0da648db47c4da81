package rpc

import (
	"math"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

func fbits(f float32) int32 { return int32(math.Float32bits(f)) }

// Each tandem op, built with tandem's constructors, must travel with ggml's op id (protocol notes,
// Appendix B.1) and ggml's op_params layout and source order (Appendix D).
func TestOpTable(t *testing.T) {
	type want struct {
		id     uint32
		params map[int]int32 // slots not listed must be 0
		srcs   []string      // names of wire sources in order ("self" for the node)
	}
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	f32 := core.TypeF32
	a := ctx.NewTensor2D(f32, 8, 4).SetName("a")
	b := ctx.NewTensor2D(f32, 8, 4).SetName("b")
	one := ctx.NewTensor1D(f32, 1).SetName("one")
	ids := ctx.NewTensor1D(core.TypeI32, 2).SetName("ids")
	x3 := ctx.NewTensor3D(f32, 8, 2, 4).SetName("x3")
	pos := ctx.NewTensor1D(core.TypeI32, 4).SetName("pos")
	img := ctx.NewTensor4D(f32, 6, 6, 2, 1).SetName("img")
	ker := ctx.NewTensor4D(f32, 3, 3, 2, 4).SetName("ker")
	dst := ctx.NewTensor2D(core.TypeF16, 8, 4).SetName("dst")
	rows := ctx.NewTensor2D(f32, 8, 2).SetName("rows")
	pos2 := ctx.NewTensor1D(f32, 4).SetName("pos2")
	sq := ctx.NewTensor2D(f32, 4, 4).SetName("sq")
	half, ln2 := float32(0.5), float32(math.Ln2) // XIELU's stored beta + softplus(0), summed in float32

	cases := []struct {
		name string
		t    *core.Tensor
		w    want
	}{
		{"DUP", ctx.Dup(a), want{1, nil, []string{"a"}}},
		{"ADD", ctx.Add(a, b), want{2, nil, []string{"a", "b"}}},
		{"ADD1", ctx.Add1(a, one), want{4, nil, []string{"a", "one"}}},
		{"SUB", ctx.Sub(a, b), want{6, nil, []string{"a", "b"}}},
		{"MUL", ctx.Mul(a, b), want{7, nil, []string{"a", "b"}}},
		{"DIV", ctx.Div(a, b), want{8, nil, []string{"a", "b"}}},
		{"SQR", ctx.Sqr(a), want{9, nil, []string{"a"}}},
		{"SQRT", ctx.Sqrt(a), want{10, nil, []string{"a"}}},
		{"LOG", ctx.Log(a), want{11, nil, []string{"a"}}},
		{"SIN", ctx.Sin(a), want{12, nil, []string{"a"}}},
		{"COS", ctx.Cos(a), want{13, nil, []string{"a"}}},
		{"SUM", ctx.Sum(a), want{14, nil, []string{"a"}}},
		{"SUM_ROWS", ctx.SumRows(a), want{15, nil, []string{"a"}}},
		{"MEAN", ctx.Mean(a), want{17, nil, []string{"a"}}},
		{"ARGMAX", ctx.Argmax(a), want{18, nil, []string{"a"}}},
		{"REPEAT", ctx.Repeat(one, a), want{20, nil, []string{"one"}}}, // template not sent
		{"CONCAT", ctx.Concat(a, b, 1), want{22, map[int]int32{0: 1}, []string{"a", "b"}}},
		{"NORM", ctx.Norm(a, 1e-5), want{24, map[int]int32{0: fbits(1e-5)}, []string{"a"}}},
		{"RMS_NORM", ctx.RMSNorm(a, 1e-6), want{25, map[int]int32{0: fbits(1e-6)}, []string{"a"}}},
		{"MUL_MAT", ctx.MulMat(a, b), want{29, nil, []string{"a", "b"}}},
		{"MUL_MAT(prec bf16)", func() *core.Tensor {
			r := ctx.MulMat(a, b)
			ctx.MulMatSetPrec(r, core.PrecBF16)
			return r
		}(), want{29, map[int]int32{0: 16}, []string{"a", "b"}}},
		{"MUL_MAT(prec f32)", func() *core.Tensor {
			r := ctx.MulMat(a, b)
			ctx.MulMatSetPrec(r, core.PrecF32)
			return r
		}(), want{29, map[int]int32{0: 10}, []string{"a", "b"}}},
		{"MUL_MAT_ID", ctx.MulMatID(x3, ctx.NewTensor3D(f32, 8, 1, 3).SetName("xb"), ctx.NewTensor2D(core.TypeI32, 2, 3).SetName("eids")),
			want{30, nil, []string{"x3", "xb", "eids"}}},
		{"OUT_PROD", ctx.OutProd(a, b), want{31, nil, []string{"a", "b"}}},
		{"SCALE", ctx.ScaleBias(a, 2.5, -1), want{32, map[int]int32{0: fbits(2.5), 1: fbits(-1)}, []string{"a"}}},
		{"CPY", ctx.Cpy(a, dst), want{34, nil, []string{"a", "dst"}}},
		{"CPY(cast)", ctx.Cast(a, core.TypeF16), want{34, nil, []string{"a", "self"}}},
		{"CONT", ctx.Cont(ctx.Transpose(a)), want{35, nil, []string{"a (transposed)"}}},
		{"RESHAPE", ctx.Reshape(a, 4, 8), want{36, nil, []string{"a"}}},
		{"VIEW", ctx.View1D(a, 2, 8), want{37, map[int]int32{0: 8, 1: 0}, []string{"a"}}},
		{"VIEW(high offset bits)", ctx.View1D(ctx.NewTensor1D(core.TypeI8, 1<<33), 2, 1<<32+12), want{37, map[int]int32{0: 12, 1: 1}, []string{""}}},
		{"PERMUTE", ctx.Permute(x3, 0, 2, 1, 3), want{38, map[int]int32{0: 0, 1: 2, 2: 1, 3: 3}, []string{"x3"}}},
		{"TRANSPOSE", ctx.Transpose(a), want{39, nil, []string{"a"}}},
		{"GET_ROWS", ctx.GetRows(a, ids), want{40, nil, []string{"a", "ids"}}},
		{"SET_ROWS", ctx.SetRows(dst, rows, ids), want{42, nil, []string{"rows", "ids", "dst"}}},
		{"DIAG_MASK_INF", ctx.DiagMaskInf(a, 3), want{44, map[int]int32{0: 3}, []string{"a"}}},
		{"SOFT_MAX", ctx.SoftMaxExt(a, b, 0.125, 0), want{46, map[int]int32{0: fbits(0.125)}, []string{"a", "b"}}},
		{"ROPE", ctx.Rope(ctx.NewTensor3D(f32, 8, 2, 4), pos, 8, core.RopeNeox), want{48, map[int]int32{1: 8, 2: 2,
			5: fbits(10000), 6: fbits(1), 8: fbits(1), 9: fbits(32), 10: fbits(1)}, []string{"", "pos"}}},
		{"CLAMP", ctx.Clamp(a, -1, 2), want{50, map[int]int32{0: fbits(-1), 1: fbits(2)}, []string{"a"}}},
		{"IM2COL", ctx.Im2Col(ker, img, core.Im2ColParams{S0: 1, S1: 2, P0: 1, P1: 0, D0: 1, D1: 1, Is2D: true}, f32),
			want{52, map[int]int32{0: 1, 1: 2, 2: 1, 4: 1, 5: 1, 6: 1}, []string{"ker", "img"}}},
		{"POOL_1D", ctx.Pool1D(a, core.PoolAvg, 2, 2, 0), want{60, map[int]int32{0: 1, 1: 2, 2: 2}, []string{"a"}}},
		{"POOL_2D", ctx.Pool2D(img, core.PoolMax, 2, 3, 2, 1, 1, 0), want{61, map[int]int32{1: 2, 2: 3, 3: 2, 4: 1, 5: 1}, []string{"img"}}},
		{"ARGSORT", ctx.Argsort(a, core.SortDesc), want{69, map[int]int32{0: 1}, []string{"a"}}},
		{"LEAKY_RELU", ctx.LeakyRelu(a, 0.01), want{71, map[int]int32{0: fbits(0.01)}, []string{"a"}}},
		{"FLASH_ATTN_EXT", faNode(ctx), want{74, map[int]int32{0: fbits(0.125), 1: fbits(8), 2: fbits(30), 3: 10},
			[]string{"q", "k", "v", "mask", "sinks"}}},
		{"GLU(REGLU,swapped)", ctx.GLUSingle(a, core.GLUReglu, true), want{100, map[int]int32{0: 0, 1: 1}, []string{"a"}}},
		{"GLU(GEGLU)", ctx.Geglu(a), want{100, map[int]int32{0: 1}, []string{"a"}}},
		{"GLU(SWIGLU,split)", ctx.SwigluSplit(a, b), want{100, map[int]int32{0: 2}, []string{"a", "b"}}},
		{"GLU(SWIGLU_OAI,split)", ctx.SwigluOAISplit(a, b, 1.702, 7, false),
			want{100, map[int]int32{0: 3, 2: fbits(1.702), 3: fbits(7)}, []string{"a", "b"}}},
		{"GLU(SWIGLU_OAI,swapped)", ctx.SwigluOAI(a, 1.5, 0.25, true),
			want{100, map[int]int32{0: 3, 1: 1, 2: fbits(1.5), 3: fbits(0.25)}, []string{"a"}}},
		{"GLU(GEGLU_ERF)", ctx.GegluErf(a), want{100, map[int]int32{0: 4}, []string{"a"}}},
		{"GLU(GEGLU_QUICK,split)", ctx.GegluQuickSplit(a, b), want{100, map[int]int32{0: 5}, []string{"a", "b"}}},
		// ggml_xielu stores beta+softplus(alpha_n), softplus(alpha_p), beta, eps; softplus(0) = ln 2,
		// and 30 > 20 is kept as it is.
		{"UNARY(XIELU)", ctx.Xielu(a, 0, 30, 0.5, -1e-6), want{91, map[int]int32{0: 17, 1: fbits(half + ln2),
			2: fbits(30), 3: fbits(0.5), 4: fbits(-1e-6)}, []string{"a"}}},
		{"ADD_ID", ctx.AddID(x3, ctx.NewTensor2D(f32, 8, 5).SetName("bias"), ctx.NewTensor2D(core.TypeI32, 2, 4).SetName("eids2")),
			want{3, nil, []string{"x3", "bias", "eids2"}}},
		{"CUMSUM", ctx.Cumsum(a), want{16, nil, []string{"a"}}},
		{"COUNT_EQUAL", ctx.CountEqual(ids, ids), want{19, nil, []string{"ids", "ids"}}},
		{"L2_NORM", ctx.L2Norm(a, 1e-6), want{28, map[int]int32{0: fbits(1e-6)}, []string{"a"}}},
		{"SET", ctx.Set(a, rows, 32, 64, 128, 8), want{33, map[int]int32{0: 32, 1: 64, 2: 128, 3: 8}, []string{"a", "rows"}}},
		{"SET(inplace)", ctx.SetInplace(a, one, 32, 128, 128, 4), want{33, map[int]int32{0: 32, 1: 128, 2: 128, 3: 4, 4: 1}, []string{"a", "one"}}},
		{"DIAG", ctx.Diag(ctx.NewTensor3D(f32, 5, 1, 2).SetName("v3")), want{43, nil, []string{"v3"}}},
		{"PAD", ctx.PadExt(a, core.PadParams{Left: [4]int{1, 2, 3, 4}, Right: [4]int{5, 6, 7, 8}}),
			want{64, map[int]int32{0: 1, 1: 5, 2: 2, 3: 6, 4: 3, 5: 7, 6: 4, 7: 8}, []string{"a"}}},
		{"PAD(circular)", ctx.PadExt(a, core.PadParams{Right: [4]int{2}, Circular: true}), want{64, map[int]int32{1: 2, 8: 1}, []string{"a"}}},
		{"PAD_REFLECT_1D", ctx.PadReflect1D(a, 3, 2), want{65, map[int]int32{0: 3, 1: 2}, []string{"a"}}},
		{"ROLL", ctx.Roll(a, -3, 2, 0, 0), want{66, map[int]int32{0: -3, 1: 2}, []string{"a"}}},
		{"ARANGE", ctx.Arange(1, 10, 0.5), want{67, map[int]int32{0: fbits(1), 1: fbits(10), 2: fbits(0.5)}, nil}},
		{"TIMESTEP_EMBEDDING", ctx.TimestepEmbedding(pos2, 7, 10000), want{68, map[int]int32{0: 7, 1: 10000}, []string{"pos2"}}},
		{"TOP_K", ctx.TopK(a, 3), want{70, nil, []string{"a"}}},
		{"TRI", ctx.Tri(sq, core.TriLower), want{72, map[int]int32{0: 3}, []string{"sq"}}},
		{"FILL", ctx.Fill(a, -2.5), want{73, map[int]int32{0: fbits(-2.5)}, []string{"a"}}},
		// State-space and linear attention (ggml_ssm_conv … ggml_gated_delta_net).
		{"SSM_CONV", ctx.SSMConv(ctx.NewTensor3D(f32, 6, 5, 2).SetName("sx"), ctx.NewTensor2D(f32, 4, 5).SetName("cw")),
			want{76, nil, []string{"sx", "cw"}}},
		{"SSM_SCAN", ctx.SSMScan(ctx.NewTensor4D(f32, 4, 3, 2, 2).SetName("ss"), ctx.NewTensor4D(f32, 3, 2, 5, 2).SetName("sx4"),
			ctx.NewTensor3D(f32, 2, 5, 2).SetName("dt"), ctx.NewTensor2D(f32, 1, 2).SetName("sa"),
			ctx.NewTensor4D(f32, 4, 1, 5, 2).SetName("sb"), ctx.NewTensor4D(f32, 4, 1, 5, 2).SetName("sc"), ids, 3),
			want{77, map[int]int32{0: 3}, []string{"ss", "sx4", "dt", "sa", "sb", "sc", "ids"}}},
		{"RWKV_WKV6", ctx.RWKVWKV6(x3, x3, x3, ctx.NewTensor2D(f32, 8, 2).SetName("tf"), x3, ctx.NewTensor2D(f32, 128, 2).SetName("st")),
			want{82, nil, []string{"x3", "x3", "x3", "tf", "x3", "st"}}},
		{"GATED_LINEAR_ATTN", ctx.GatedLinearAttn(x3, x3, x3, x3, ctx.NewTensor2D(f32, 128, 1).SetName("st1"), 0.125),
			want{83, map[int]int32{0: fbits(0.125)}, []string{"x3", "x3", "x3", "x3", "st1"}}},
		{"RWKV_WKV7", ctx.RWKVWKV7(x3, x3, x3, x3, x3, x3, ctx.NewTensor2D(f32, 128, 4).SetName("st4")),
			want{84, nil, []string{"x3", "x3", "x3", "x3", "x3", "x3", "st4"}}},
		{"SOLVE_TRI", ctx.SolveTri(sq, ctx.NewTensor2D(f32, 3, 4).SetName("rhs"), true, true, false), want{85, nil, []string{"sq", "rhs"}}},
		{"GATED_DELTA_NET", ctx.GatedDeltaNet(x3, x3, ctx.NewTensor4D(f32, 8, 2, 4, 1).SetName("gv"), ctx.NewTensor4D(f32, 1, 2, 4, 1).SetName("gg"),
			ctx.NewTensor4D(f32, 1, 2, 4, 1).SetName("gb"), ctx.NewTensor4D(f32, 8, 8, 2, 1).SetName("gs"), 2),
			want{86, map[int]int32{0: 2}, []string{"x3", "x3", "gv", "gg", "gb", "gs"}}},
		// DeepSeek V4's hyper-connection ops.
		{"DSV4_HC_COMB", ctx.Dsv4HcComb(ctx.NewTensor2D(f32, 24, 3).SetName("mixes"), ctx.NewTensor1D(f32, 3).SetName("hsc"),
			ctx.NewTensor1D(f32, 24).SetName("hbase"), 1e-6, 4), want{88, map[int]int32{0: fbits(1e-6), 1: 4}, []string{"mixes", "hsc", "hbase"}}},
		{"DSV4_HC_PRE", ctx.Dsv4HcPre(ctx.NewTensor3D(f32, 8, 4, 3).SetName("hx"), ctx.NewTensor2D(f32, 4, 3).SetName("hw")),
			want{89, nil, []string{"hx", "hw"}}},
		{"DSV4_HC_POST", ctx.Dsv4HcPost(ctx.NewTensor2D(f32, 8, 3).SetName("hx2"), ctx.NewTensor3D(f32, 8, 4, 3).SetName("hres"),
			ctx.NewTensor2D(f32, 4, 3).SetName("hpost"), ctx.NewTensor3D(f32, 4, 4, 3).SetName("hcomb")),
			want{90, nil, []string{"hx2", "hres", "hpost", "hcomb"}}},
		{"LIGHTNING_INDEXER", ctx.LightningIndexer(ctx.NewTensor4D(f32, 32, 3, 2, 2).SetName("liq"), ctx.NewTensor4D(core.TypeQ8_0, 32, 1, 5, 2).SetName("lik"),
			ctx.NewTensor4D(f32, 3, 2, 1, 2).SetName("liw"), ctx.NewTensor4D(core.TypeF16, 5, 2, 1, 1).SetName("lim")),
			want{87, nil, []string{"liq", "lik", "liw", "lim"}}},
		// Image and vision-transformer ops (ggml_group_norm, ggml_interpolate, SAM's window ops).
		{"GROUP_NORM", ctx.GroupNorm(img, 2, 1e-6), want{27, map[int]int32{0: 2, 1: fbits(1e-6)}, []string{"img"}}},
		{"UPSCALE", ctx.Interpolate(img, 9, 4, 2, 1, core.ScaleBicubic|core.ScaleAlignCorners), want{63, map[int]int32{0: 0x102}, []string{"img"}}},
		{"WIN_PART", ctx.WinPart(img, 4), want{78, map[int]int32{0: 2, 1: 1, 2: 4}, []string{"img"}}},
		{"WIN_UNPART", ctx.WinUnpart(ctx.NewTensor4D(f32, 6, 4, 4, 2).SetName("wins"), 7, 3, 4), want{79, map[int]int32{0: 4}, []string{"wins"}}},
		{"GET_REL_POS", ctx.GetRelPos(ctx.NewTensor2D(core.TypeF16, 8, 5).SetName("rel"), 3, 3), want{80, nil, []string{"rel"}}},
		{"ADD_REL_POS", ctx.AddRelPosInplace(ctx.NewTensor3D(f32, 4, 6, 2).SetName("att"), ctx.NewTensor4D(f32, 2, 3, 2, 2).SetName("pw"),
			ctx.NewTensor4D(f32, 2, 3, 2, 2).SetName("ph")), want{81, map[int]int32{0: 1}, []string{"att", "pw", "ph"}}},
		// Convolution nodes (ggml_conv_transpose_1d … ggml_conv_transpose_2d_p0).
		{"CONV_TRANSPOSE_1D", ctx.ConvTranspose1D(ctx.NewTensor3D(f32, 3, 4, 2).SetName("k1"), ctx.NewTensor2D(f32, 5, 2).SetName("in1"), 2, 0, 1),
			want{51, map[int]int32{0: 2, 2: 1}, []string{"k1", "in1"}}},
		{"IM2COL_3D", ctx.Im2Col3D(ctx.NewTensor4D(f32, 2, 2, 2, 4).SetName("k3"), ctx.NewTensor4D(f32, 5, 5, 5, 4).SetName("in3"), 2,
			core.Conv3DParams{S0: 1, S1: 2, S2: 3, P0: 1, P1: 0, P2: 2, D0: 1, D1: 2, D2: 1}, core.TypeF16),
			want{54, map[int]int32{0: 1, 1: 2, 2: 3, 3: 1, 5: 2, 6: 1, 7: 2, 8: 1, 9: 2}, []string{"k3", "in3"}}},
		{"COL2IM_1D", ctx.Col2Im1D(ctx.NewTensor2D(f32, 12, 5).SetName("cols"), 2, 3, 1), want{55, map[int]int32{0: 2, 1: 3, 2: 1}, []string{"cols"}}},
		{"CONV_2D", ctx.Conv2DDirect(ker, img, 1, 2, 1, 0, 2, 1), want{56, map[int]int32{0: 1, 1: 2, 2: 1, 4: 2, 5: 1}, []string{"ker", "img"}}},
		{"CONV_3D", ctx.Conv3DDirect(ctx.NewTensor4D(f32, 2, 2, 2, 6).SetName("k3d"), ctx.NewTensor4D(f32, 5, 5, 5, 4).SetName("in3d"),
			core.Conv3DParams{S0: 1, S1: 1, S2: 2, P0: 0, P1: 1, P2: 0, D0: 1, D1: 1, D2: 1}, 2, 2, 3),
			want{57, map[int]int32{0: 1, 1: 1, 2: 2, 4: 1, 6: 1, 7: 1, 8: 1, 9: 2, 10: 2, 11: 3}, []string{"k3d", "in3d"}}},
		{"CONV_2D_DW", ctx.Conv2DDwDirect(ctx.NewTensor4D(f32, 3, 3, 1, 2).SetName("kdw"), img, 2, 1, 1, 1, 1, 2),
			want{58, map[int]int32{0: 2, 1: 1, 2: 1, 3: 1, 4: 1, 5: 2}, []string{"kdw", "img"}}},
		{"CONV_TRANSPOSE_2D", ctx.ConvTranspose2DP0(ctx.NewTensor4D(f32, 3, 3, 4, 2).SetName("kt2"), img, 2),
			want{59, map[int]int32{0: 2}, []string{"kt2", "img"}}},
		// Training ops (ggml_acc_impl, ggml_*_back, ggml_cross_entropy_loss*, ggml_opt_step_*).
		{"ACC", ctx.Acc(a, rows, 32, 64, 128, 8), want{5, map[int]int32{0: 32, 1: 64, 2: 128, 3: 8}, []string{"a", "rows"}}},
		{"REPEAT_BACK", ctx.RepeatBack(x3, rows), want{21, nil, []string{"x3"}}}, // template not sent
		{"SILU_BACK", ctx.SiluBack(a, b), want{23, nil, []string{"a", "b"}}},
		{"RMS_NORM_BACK", ctx.RMSNormBack(a, b, 1e-6), want{26, map[int]int32{0: fbits(1e-6)}, []string{"a", "b"}}},
		{"GET_ROWS_BACK", ctx.GetRowsBack(rows, ids, a), want{41, nil, []string{"rows", "ids"}}}, // template not sent
		{"DIAG_MASK_ZERO", ctx.DiagMaskZero(a, 2), want{45, map[int]int32{0: 2}, []string{"a"}}},
		{"SOFT_MAX_BACK", ctx.SoftMaxExtBack(a, b, 0.25, 0), want{47, map[int]int32{0: fbits(0.25)}, []string{"a", "b"}}},
		{"ROPE_BACK", ctx.RopeExtBack(ctx.NewTensor3D(f32, 8, 2, 4).SetName("g"), pos, nil, core.RopeParams{NDims: 4,
			Mode: core.RopeNeox, NCtxOrig: 4096, FreqBase: 500000, FreqScale: 0.25, ExtFactor: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}),
			want{49, map[int]int32{1: 4, 2: 2, 4: 4096, 5: fbits(500000), 6: fbits(0.25), 7: fbits(1), 8: fbits(1), 9: fbits(32), 10: fbits(1)},
				[]string{"g", "pos"}}},
		{"IM2COL_BACK", ctx.Im2ColBack(ctx.NewTensor4D(f32, 18, 6, 2, 1).SetName("gim"), ker, img.Ne,
			core.Im2ColParams{S0: 1, S1: 2, P0: 1, P1: 0, D0: 1, D1: 1, Is2D: true}),
			want{53, map[int]int32{0: 1, 1: 2, 2: 1, 4: 1, 5: 1, 6: 1}, []string{"gim", "ker"}}},
		{"POOL_2D_BACK", ctx.Pool2DBack(ctx.NewTensor4D(f32, 4, 6, 2, 1).SetName("gp"), img, core.PoolAvg, 2, 3, 2, 1, 1, 1),
			want{62, map[int]int32{0: 1, 1: 2, 2: 3, 3: 2, 4: 1, 5: 1, 6: 1}, []string{"gp", "img"}}},
		{"CROSS_ENTROPY_LOSS", ctx.CrossEntropyLoss(a, b), want{96, nil, []string{"a", "b"}}},
		{"CROSS_ENTROPY_LOSS_BACK", ctx.CrossEntropyLossBack(one, a, b), want{97, nil, []string{"one", "a", "b"}}},
		{"OPT_STEP_ADAMW", ctx.OptStepAdamW(a, b, ctx.NewTensor2D(f32, 8, 4).SetName("m"), ctx.NewTensor2D(f32, 8, 4).SetName("v"),
			ctx.NewTensor1D(f32, core.AdamWNParams).SetName("hp")), want{98, nil, []string{"a", "b", "m", "v", "hp"}}},
		{"OPT_STEP_SGD", ctx.OptStepSGD(a, b, ctx.NewTensor1D(f32, core.SGDNParams).SetName("hp2")),
			want{99, nil, []string{"a", "b", "hp2"}}},
	}
	// Every unary kind tandem has, with ggml's number in op_params[0] (Appendix B.2).
	ggmlUnary := map[core.UnaryOp]int32{core.UnaryAbs: 0, core.UnarySgn: 1, core.UnaryNeg: 2, core.UnaryStep: 3,
		core.UnaryTanh: 4, core.UnaryElu: 5, core.UnaryRelu: 6, core.UnarySigmoid: 7, core.UnaryGelu: 8,
		core.UnaryGeluQuick: 9, core.UnarySilu: 10, core.UnaryHardswish: 11, core.UnaryHardsigmoid: 12, core.UnaryExp: 13,
		core.UnaryExpm1: 14, core.UnarySoftplus: 15, core.UnaryGeluErf: 16, core.UnaryXielu: 17, core.UnaryFloor: 18,
		core.UnaryCeil: 19, core.UnaryRound: 20, core.UnaryTrunc: 21}
	for u := core.UnaryOp(0); u < core.UnaryCount; u++ {
		if u == core.UnaryXielu {
			continue // takes parameters: its own case above
		}
		id, ok := ggmlUnary[u]
		if !ok {
			t.Errorf("unary %v has no ggml number in this test", u)
			continue
		}
		cases = append(cases, struct {
			name string
			t    *core.Tensor
			w    want
		}{"UNARY(" + u.String() + ")", ctx.Unary(a, u), want{91, map[int]int32{0: id}, []string{"a"}}})
	}
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	covered := map[core.Op]bool{core.OpNone: true}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			covered[tc.t.Op] = true
			id, ok := GGMLOp(tc.t.Op)
			if !ok || id != tc.w.id {
				t.Fatalf("op %v: ggml id %d (ok %v), want %d", tc.t.Op, id, ok, tc.w.id)
			}
			p := wireParams(tc.t)
			for i := range p {
				if p[i] != tc.w.params[i] {
					t.Errorf("op_params[%d] = %d, want %d (all: %v)", i, p[i], tc.w.params[i], p)
				}
			}
			s := wireSources(tc.t)
			for i := range s {
				var name string
				switch {
				case i >= len(tc.w.srcs):
					if s[i] != nil {
						t.Errorf("src[%d] = %v, want none", i, s[i])
					}
					continue
				case s[i] == nil:
					name = "<nil>"
				case s[i] == tc.t:
					name = "self"
				default:
					name = s[i].Name
				}
				if name != tc.w.srcs[i] {
					t.Errorf("src[%d] = %q, want %q", i, name, tc.w.srcs[i])
				}
			}
		})
	}
	for _, e := range opTable {
		if !covered[e.Op] {
			t.Errorf("op %v is in the table but not tested", e.Op)
		}
	}
	if ggmlOpCount != 101 || ggmlUnaryCount != 22 || ggmlGLUCount != 6 {
		t.Error("enum counts differ from protocol 5.1.0")
	}
}

// faNode is a FLASH_ATTN_EXT node with every source and parameter set.
func faNode(ctx *core.Context) *core.Tensor {
	q := ctx.NewTensor4D(core.TypeF32, 32, 3, 4, 1).SetName("q")
	k := ctx.NewTensor4D(core.TypeF16, 32, 7, 2, 1).SetName("k")
	v := ctx.NewTensor4D(core.TypeF16, 16, 7, 2, 1).SetName("v")
	mask := ctx.NewTensor2D(core.TypeF16, 7, 3).SetName("mask")
	sinks := ctx.NewTensor1D(core.TypeF32, 4).SetName("sinks")
	r := ctx.FlashAttnExt(q, k, v, mask, 0.125, 8, 30)
	ctx.FlashAttnExtAddSinks(r, sinks)
	ctx.FlashAttnExtSetPrec(r, core.PrecF32)
	return r
}
