package core_test

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// faShapes builds the usual operands: q [dk, nq, nh, 1], k/v [dk|dv, nkv, nhkv, 1] of type kv.
func faShapes(c *core.Context, kv core.Type, dk, dv, nq, nkv, nh, nhkv int64) (q, k, v *core.Tensor) {
	q = c.NewTensor4D(core.TypeF32, dk, nq, nh, 1)
	k = c.NewTensor4D(kv, dk, nkv, nhkv, 1)
	v = c.NewTensor4D(kv, dv, nkv, nhkv, 1)
	return q, k, v
}

func TestFlashAttnExtShapeAndParams(t *testing.T) {
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	q, k, v := faShapes(c, core.TypeF16, 64, 48, 7, 33, 8, 2)
	mask := c.NewTensor4D(core.TypeF16, 33, 7, 1, 1)
	r := c.FlashAttnExt(q, k, v, mask, 0.125, 8, 30)
	sinks := c.NewTensor1D(core.TypeF32, 8)
	c.FlashAttnExtAddSinks(r, sinks)
	c.FlashAttnExtSetPrec(r, core.PrecF32)
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	if r.Op != core.OpFlashAttnExt || r.Type != core.TypeF32 || r.Ne != [4]int64{48, 8, 7, 1} {
		t.Fatalf("result %v, want FLASH_ATTN_EXT f32 [48,8,7,1]", r)
	}
	if r.Src[0] != q || r.Src[1] != k || r.Src[2] != v || r.Src[3] != mask || r.Src[4] != sinks {
		t.Fatalf("sources %v", r.Src[:5])
	}
	want := core.FlashAttnParams{Scale: 0.125, MaxBias: 8, LogitSoftcap: 30, Prec: core.PrecF32}
	if got := core.FlashAttnParamsOf(r); got != want {
		t.Fatalf("params %+v, want %+v", got, want)
	}
	// ggml's op_params words: three floats then the precision.
	if r.Params[0] != 0x3e000000 || r.Params[1] != 0x41000000 || r.Params[2] != 0x41f00000 || r.Params[3] != 10 {
		t.Fatalf("op params %x", r.Params[:4])
	}
	c.FlashAttnExtAddSinks(r, nil)
	if r.Src[4] != nil || c.Err() != nil {
		t.Fatalf("removing sinks: src4 %v, err %v", r.Src[4], c.Err())
	}
	if got := core.FlashAttnParamsOf(q); got != (core.FlashAttnParams{}) {
		t.Fatalf("params of a leaf %+v", got)
	}

	// KV-cache views: permuted, non-contiguous k and v with contiguous rows; no mask; Q8_0.
	cache := c.NewTensor3D(core.TypeQ8_0, 64, 4, 40) // [dk, n_head_kv, n_ctx]
	kv := c.Permute(c.View3D(cache, 64, 4, 17, cache.Nb[1], cache.Nb[2], 0), 0, 2, 1, 3)
	q2 := c.NewTensor4D(core.TypeF32, 64, 3, 12, 1)
	r2 := c.FlashAttnExt(q2, kv, kv, nil, 1, 0, 0)
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	if r2.Ne != [4]int64{64, 12, 3, 1} {
		t.Fatalf("result %v", r2)
	}
}

func TestFlashAttnExtBadInput(t *testing.T) {
	type mk func(c *core.Context) (q, k, v, mask *core.Tensor)
	std := func(kv core.Type) mk {
		return func(c *core.Context) (q, k, v, mask *core.Tensor) {
			q, k, v = faShapes(c, kv, 32, 32, 4, 16, 4, 2)
			return q, k, v, c.NewTensor2D(core.TypeF16, 16, 4)
		}
	}
	with := func(f func(c *core.Context, q, k, v, mask *core.Tensor) (*core.Tensor, *core.Tensor, *core.Tensor, *core.Tensor)) mk {
		return func(c *core.Context) (q, k, v, mask *core.Tensor) {
			q, k, v, mask = std(core.TypeF16)(c)
			return f(c, q, k, v, mask)
		}
	}
	cases := []struct {
		name    string
		make    mk
		maxBias float32
		want    string
	}{
		{"q f16", with(func(c *core.Context, q, k, v, m *core.Tensor) (*core.Tensor, *core.Tensor, *core.Tensor, *core.Tensor) {
			return c.NewTensor4D(core.TypeF16, 32, 4, 4, 1), k, v, m
		}), 0, "q"},
		{"k i32", with(func(c *core.Context, q, k, v, m *core.Tensor) (*core.Tensor, *core.Tensor, *core.Tensor, *core.Tensor) {
			return q, c.NewTensor4D(core.TypeI32, 32, 16, 2, 1), v, m
		}), 0, "unsupported type"},
		{"v i32", with(func(c *core.Context, q, k, v, m *core.Tensor) (*core.Tensor, *core.Tensor, *core.Tensor, *core.Tensor) {
			return q, k, c.NewTensor4D(core.TypeI32, 32, 16, 2, 1), m
		}), 0, "unsupported type"},
		{"head size", with(func(c *core.Context, q, k, v, m *core.Tensor) (*core.Tensor, *core.Tensor, *core.Tensor, *core.Tensor) {
			return c.NewTensor4D(core.TypeF32, 40, 4, 4, 1), k, v, m
		}), 0, "head size"},
		{"kv rows", with(func(c *core.Context, q, k, v, m *core.Tensor) (*core.Tensor, *core.Tensor, *core.Tensor, *core.Tensor) {
			return q, k, c.NewTensor4D(core.TypeF16, 32, 15, 2, 1), m
		}), 0, "kv rows"},
		{"gqa k", with(func(c *core.Context, q, k, v, m *core.Tensor) (*core.Tensor, *core.Tensor, *core.Tensor, *core.Tensor) {
			return q, c.NewTensor4D(core.TypeF16, 32, 16, 3, 1), v, m
		}), 0, "multiple of k heads"},
		{"gqa v", with(func(c *core.Context, q, k, v, m *core.Tensor) (*core.Tensor, *core.Tensor, *core.Tensor, *core.Tensor) {
			return q, k, c.NewTensor4D(core.TypeF16, 32, 16, 3, 1), m
		}), 0, "multiple of v heads"},
		{"dim 3", with(func(c *core.Context, q, k, v, m *core.Tensor) (*core.Tensor, *core.Tensor, *core.Tensor, *core.Tensor) {
			return c.NewTensor4D(core.TypeF32, 32, 4, 4, 2), k, v, m
		}), 0, "dimension 3"},
		{"q rows strided", with(func(c *core.Context, q, k, v, m *core.Tensor) (*core.Tensor, *core.Tensor, *core.Tensor, *core.Tensor) {
			return c.Permute(c.NewTensor4D(core.TypeF32, 4, 32, 4, 1), 1, 0, 2, 3), k, v, m
		}), 0, "q"},
		{"k transposed", with(func(c *core.Context, q, k, v, m *core.Tensor) (*core.Tensor, *core.Tensor, *core.Tensor, *core.Tensor) {
			return q, c.Transpose(c.NewTensor4D(core.TypeF16, 16, 32, 2, 1)), v, m
		}), 0, "not contiguous"},
		{"v transposed", with(func(c *core.Context, q, k, v, m *core.Tensor) (*core.Tensor, *core.Tensor, *core.Tensor, *core.Tensor) {
			return q, k, c.Transpose(c.NewTensor4D(core.TypeF16, 16, 32, 2, 1)), m
		}), 0, "not contiguous"},
		{"control: f16 head 40, no mask", func(c *core.Context) (q, k, v, mask *core.Tensor) {
			q, k, v = faShapes(c, core.TypeF16, 40, 24, 4, 16, 4, 2)
			return q, k, v, nil
		}, 0, ""}, // valid
		{"mask i32", with(func(c *core.Context, q, k, v, m *core.Tensor) (*core.Tensor, *core.Tensor, *core.Tensor, *core.Tensor) {
			return q, k, v, c.NewTensor2D(core.TypeI32, 16, 4)
		}), 0, "mask"},
		{"mask short columns", with(func(c *core.Context, q, k, v, m *core.Tensor) (*core.Tensor, *core.Tensor, *core.Tensor, *core.Tensor) {
			return q, k, v, c.NewTensor2D(core.TypeF16, 15, 4)
		}), 0, "does not cover"},
		{"mask short rows", with(func(c *core.Context, q, k, v, m *core.Tensor) (*core.Tensor, *core.Tensor, *core.Tensor, *core.Tensor) {
			return q, k, v, c.NewTensor2D(core.TypeF16, 16, 3)
		}), 0, "does not cover"},
		{"mask heads", with(func(c *core.Context, q, k, v, m *core.Tensor) (*core.Tensor, *core.Tensor, *core.Tensor, *core.Tensor) {
			return q, k, v, c.NewTensor3D(core.TypeF16, 16, 4, 3)
		}), 0, "broadcast"},
		{"mask transposed", with(func(c *core.Context, q, k, v, m *core.Tensor) (*core.Tensor, *core.Tensor, *core.Tensor, *core.Tensor) {
			return q, k, v, c.Transpose(c.NewTensor2D(core.TypeF16, 16, 16))
		}), 0, "mask"},
		{"alibi without mask", with(func(c *core.Context, q, k, v, m *core.Tensor) (*core.Tensor, *core.Tensor, *core.Tensor, *core.Tensor) {
			return q, k, v, nil
		}), 8, "needs a mask"},
		{"empty kv", func(c *core.Context) (q, k, v, mask *core.Tensor) {
			q, k, v = faShapes(c, core.TypeF16, 32, 32, 4, 0, 4, 2)
			return q, k, v, nil
		}, 0, "empty"},
		{"nil q", with(func(c *core.Context, q, k, v, m *core.Tensor) (*core.Tensor, *core.Tensor, *core.Tensor, *core.Tensor) {
			return nil, k, v, m
		}), 0, "nil"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := core.NewContext(core.ContextParams{NoAlloc: true})
			q, k, v, m := tc.make(c)
			if err := c.Err(); err != nil {
				t.Fatalf("operands: %v", err)
			}
			r := c.FlashAttnExt(q, k, v, m, 1, tc.maxBias, 0)
			err := c.Err()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("valid operands rejected: %v", err)
				}
				return
			}
			if err == nil || r.Err() == nil {
				t.Fatalf("accepted (%v); want an error containing %q", r, tc.want)
			}
			if !containsFold(err.Error(), tc.want) || !containsFold(err.Error(), "FLASH_ATTN_EXT") {
				t.Fatalf("error %q does not name FLASH_ATTN_EXT and %q", err, tc.want)
			}
		})
	}
}

func TestFlashAttnExtSinksAndPrecBadInput(t *testing.T) {
	cases := []struct {
		name string
		run  func(c *core.Context)
		want string
	}{
		{"sinks on another op", func(c *core.Context) {
			c.FlashAttnExtAddSinks(c.NewTensor1D(core.TypeF32, 4), c.NewTensor1D(core.TypeF32, 4))
		}, "not a FLASH_ATTN_EXT node"},
		{"sinks f16", func(c *core.Context) {
			c.FlashAttnExtAddSinks(faNode(c), c.NewTensor1D(core.TypeF16, 4))
		}, "f32"},
		{"sinks wrong length", func(c *core.Context) {
			c.FlashAttnExtAddSinks(faNode(c), c.NewTensor1D(core.TypeF32, 2))
		}, "one per head"},
		{"sinks 2-D", func(c *core.Context) {
			c.FlashAttnExtAddSinks(faNode(c), c.NewTensor2D(core.TypeF32, 4, 2))
		}, "one per head"},
		{"sinks twice", func(c *core.Context) {
			r := faNode(c)
			c.FlashAttnExtAddSinks(r, c.NewTensor1D(core.TypeF32, 4))
			c.FlashAttnExtAddSinks(r, c.NewTensor1D(core.TypeF32, 4))
		}, "already has sinks"},
		{"sinks nil node", func(c *core.Context) { c.FlashAttnExtAddSinks(nil, nil) }, "nil"},
		{"prec unknown", func(c *core.Context) { c.FlashAttnExtSetPrec(faNode(c), 3) }, "unknown precision"},
		{"prec on another op", func(c *core.Context) {
			c.FlashAttnExtSetPrec(c.NewTensor1D(core.TypeF32, 4), core.PrecF32)
		}, "not a FLASH_ATTN_EXT node"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := callNoPanic(t, func() error { return build(tc.run) })
			if err == nil || !containsFold(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// nil context: no panic
	var nc *core.Context
	nc.FlashAttnExtAddSinks(nil, nil)
	nc.FlashAttnExtSetPrec(nil, core.PrecF32)
}

func faNode(c *core.Context) *core.Tensor {
	q, k, v := faShapes(c, core.TypeF16, 32, 32, 4, 16, 4, 2)
	return c.FlashAttnExt(q, k, v, nil, 1, 0, 0)
}
