package gputest

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// DeviceBuffers checks the contract of be's default buffer type on two tensors of 100 f32 in one
// buffer: device memory (no host data), TensorSet/TensorGet, a device-to-device copy, a memset of a
// byte range, range errors (past the end, negative offset) and Clear. It returns the buffer, the
// first tensor and the values written, for the backend's own checks.
func DeviceBuffers(t *testing.T, be core.Backend) (buf core.Buffer, a *core.Tensor, vals []float32) {
	t.Helper()
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a = ctx.NewTensor1D(core.TypeF32, 100)
	b := ctx.NewTensor1D(core.TypeF32, 100)
	buf = AllocCtx(t, ctx, be.DefaultBufferType())
	if buf.Type().IsHost() || a.Data() != nil {
		t.Fatal("device buffer claims to be host memory")
	}
	vals = make([]float32, 100)
	for i := range vals {
		vals[i] = float32(i) - 50
	}
	if err := core.SetFloat32s(a, vals); err != nil {
		t.Fatal(err)
	}
	if err := core.TensorCopy(a, b); err != nil { // device to device
		t.Fatal(err)
	}
	got, err := core.GetFloat32s(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != vals[i] {
			t.Fatalf("copy: element %d = %v, want %v", i, got[i], vals[i])
		}
	}
	if err := core.TensorMemset(b, 0, 8, 392); err != nil {
		t.Fatal(err)
	}
	got, _ = core.GetFloat32s(b)
	if got[1] != vals[1] || got[2] != 0 || got[99] != 0 {
		t.Fatalf("memset: %v", got[:4])
	}
	if err := core.TensorSet(a, make([]byte, 8), 396); err == nil {
		t.Error("out-of-range TensorSet accepted")
	}
	if err := core.TensorGet(a, make([]byte, 8), -4); err == nil {
		t.Error("negative-offset TensorGet accepted")
	}
	if err := buf.Clear(0); err != nil {
		t.Fatal(err)
	}
	got, _ = core.GetFloat32s(a)
	if got[0] != 0 || got[99] != 0 {
		t.Fatal("Clear did not zero")
	}
	return buf, a, vals
}
