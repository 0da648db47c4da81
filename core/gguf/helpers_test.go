package gguf

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// allKinds is one metadata entry of every scalar and array kind.
func allKinds() []KV {
	return []KV{
		{"general.architecture", "llama"},
		{"general.alignment", uint32(64)},
		{"k.u8", uint8(200)},
		{"k.i8", int8(-100)},
		{"k.u16", uint16(60000)},
		{"k.i16", int16(-30000)},
		{"k.u32", uint32(4000000000)},
		{"k.i32", int32(-2000000000)},
		{"k.f32", float32(3.25)},
		{"k.bool", true},
		{"k.str", "héllo\x00world"},
		{"k.u64", uint64(1) << 63},
		{"k.i64", int64(-1) << 62},
		{"k.f64", float64(-1e300)},
		{"k.empty", ""},
		{"a.u8", []uint8{1, 2, 255}},
		{"a.i8", []int8{-1, 0, 127}},
		{"a.u16", []uint16{1, 65535}},
		{"a.i16", []int16{-32768, 32767}},
		{"a.u32", []uint32{7, 8, 9}},
		{"a.i32", []int32{-7, 8}},
		{"a.f32", []float32{0.5, -2}},
		{"a.bool", []bool{true, false, true}},
		{"a.str", []string{"a", "", "ccc"}},
		{"a.u64", []uint64{1 << 40}},
		{"a.i64", []int64{-1 << 40, 3}},
		{"a.f64", []float64{1.5, 2.5}},
		{"a.empty", []string{}},
	}
}

func allTypes() []core.Type {
	var ts []core.Type
	for t := core.Type(0); t < 64; t++ {
		if t.Valid() && t.Size() > 0 {
			ts = append(ts, t)
		}
	}
	return ts
}

// testTensors makes a host context with one tensor of every type (random bytes) plus shapes of 1
// to 4 dimensions.
func testTensors(t testing.TB, seed uint64) (*core.Context, []*core.Tensor) {
	t.Helper()
	ctx := core.NewContext(core.ContextParams{MemSize: 16 << 20})
	r := rand.New(rand.NewPCG(seed, 1))
	var ts []*core.Tensor
	for _, typ := range allTypes() {
		bs := typ.BlockSize()
		ts = append(ts, ctx.NewTensor2D(typ, 2*bs, 3).SetName("w."+typ.String()))
	}
	ts = append(ts,
		ctx.NewTensor1D(core.TypeF32, 5).SetName("one"),
		ctx.NewTensor3D(core.TypeF16, 4, 3, 2).SetName("three"),
		ctx.NewTensor4D(core.TypeF32, 2, 1, 3, 2).SetName("four"),
		ctx.NewTensor4D(core.TypeF32, 3, 1, 1, 1).SetName("scalarish"))
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	for _, x := range ts {
		d := x.Data()
		for i := range d {
			d[i] = byte(r.Uint32())
		}
	}
	return ctx, ts
}

func testMetadata(t testing.TB, kvs []KV) *Metadata {
	t.Helper()
	var md Metadata
	for _, kv := range kvs {
		if err := md.Set(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	return &md
}

func writeBytes(t testing.TB, md *Metadata, ts []*core.Tensor) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, md, ts); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readBytes(t testing.TB, b []byte) *File {
	t.Helper()
	f, err := Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func rewrite(t testing.TB, f *File) []byte {
	t.Helper()
	w, err := WriterFrom(f)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeFileBytes(path string, b []byte) error { return os.WriteFile(path, b, 0o644) }
