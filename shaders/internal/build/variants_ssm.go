package build

// The state-space and linear-attention ops (SSM_CONV, SSM_SCAN, RWKV_WKV6, GATED_LINEAR_ATTN,
// RWKV_WKV7, SOLVE_TRI, GATED_DELTA_NET): one f32 shader, the op chosen by a specialization
// constant.
func init() {
	Register(Variant{Name: "ssm", Source: "ssm.comp"})
}
