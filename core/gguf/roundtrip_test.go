package gguf

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// Write → read gives back every metadata kind and every tensor type exactly; read → write and
// write → read → write reproduce the bytes.
func TestRoundTripAllKindsAllTypes(t *testing.T) {
	kvs := allKinds()
	_, ts := testTensors(t, 1)
	// every type a published GGUF file uses is covered
	have := map[core.Type]bool{}
	for _, x := range ts {
		have[x.Type] = true
	}
	for _, typ := range []core.Type{core.TypeF32, core.TypeF16, core.TypeBF16, core.TypeQ4_0, core.TypeQ4_1,
		core.TypeQ5_0, core.TypeQ5_1, core.TypeQ8_0, core.TypeQ8_1, core.TypeQ2_K, core.TypeQ3_K, core.TypeQ4_K,
		core.TypeQ5_K, core.TypeQ6_K, core.TypeQ8_K, core.TypeIQ4_NL, core.TypeIQ4_XS,
		core.TypeMXFP4, core.TypeNVFP4, core.TypeQ1_0, core.TypeTQ1_0, core.TypeTQ2_0,
		core.TypeIQ3_XXS, core.TypeIQ3_S, core.TypeQ2_0, core.TypeIQ2_XXS, core.TypeIQ2_XS, core.TypeIQ2_S,
		core.TypeIQ1_S, core.TypeIQ1_M, core.TypeI8, core.TypeI16, core.TypeI32,
		core.TypeI64, core.TypeF64} {
		if !have[typ] {
			t.Fatalf("type %v is not in the round trip", typ)
		}
	}
	b1 := writeBytes(t, testMetadata(t, kvs), ts)
	f := readBytes(t, b1)
	if f.Version != 3 || f.Alignment() != 64 || f.DataOffset()%64 != 0 {
		t.Fatalf("version %d alignment %d data offset %d", f.Version, f.Alignment(), f.DataOffset())
	}
	if got := f.KVs(); !reflect.DeepEqual(got, kvs) {
		t.Fatalf("metadata:\n got %v\nwant %v", got, kvs)
	}
	wantKeys := make([]string, len(kvs))
	for i, kv := range kvs {
		wantKeys[i] = kv.Key
	}
	if !reflect.DeepEqual(f.Keys(), wantKeys) {
		t.Fatalf("keys %v, want %v", f.Keys(), wantKeys)
	}
	if len(f.Tensors) != len(ts) {
		t.Fatalf("%d tensors, want %d", len(f.Tensors), len(ts))
	}
	var off int64
	for i, x := range ts {
		ti := f.Tensors[i]
		if ti.Name != x.Name || ti.Type != x.Type || ti.Ne != x.Ne || ti.Size != x.NBytes() || ti.Offset != off {
			t.Fatalf("tensor %d: %+v, want %v at offset %d", i, ti, x, off)
		}
		off += core.AlignUp(ti.Size, 64)
		r, err := f.TensorReader(x.Name)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, ti.Size)
		if _, err := r.ReadAt(got, 0); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, x.Data()) {
			t.Fatalf("tensor %s: data differs", x.Name)
		}
	}
	if f.Tensors[len(ts)-1].NDims != 1 || f.Tensors[len(ts)-2].NDims != 4 || f.Tensors[len(ts)-3].NDims != 3 {
		t.Fatalf("n_dims %d %d %d, want 1 4 3", f.Tensors[len(ts)-1].NDims, f.Tensors[len(ts)-2].NDims, f.Tensors[len(ts)-3].NDims)
	}
	if int64(len(b1)) != f.DataOffset()+off {
		t.Fatalf("file of %d bytes, want the data section padded to the end (%d)", len(b1), f.DataOffset()+off)
	}
	if b2 := rewrite(t, f); !bytes.Equal(b1, b2) {
		t.Fatalf("read → write: %d bytes differ from the %d written", len(b2), len(b1))
	}

	// loading, then writing the context's tensors, reproduces the file too
	m, err := f.Load(&LoadOptions{NoMmap: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	w := NewWriter()
	for _, kv := range f.KVs() {
		if err := w.Metadata.Set(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	for i, x := range m.Ctx.Tensors() {
		if err := w.AddTensorNDims(x, m.Infos[i].NDims); err != nil {
			t.Fatal(err)
		}
	}
	var b3 bytes.Buffer
	if _, err := w.WriteTo(&b3); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1, b3.Bytes()) {
		t.Fatal("load → write differs from the original file")
	}
}

// Version 2 files read and write back as version 2; the default alignment is 32.
func TestRoundTripV2DefaultAlignment(t *testing.T) {
	_, ts := testTensors(t, 2)
	w := NewWriter()
	w.Version = 2
	if err := w.Metadata.Set("general.name", "v2"); err != nil {
		t.Fatal(err)
	}
	for _, x := range ts[:3] {
		if err := w.AddTensor(x); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if v := binary.LittleEndian.Uint32(b[4:]); v != 2 {
		t.Fatalf("version field %d", v)
	}
	f := readBytes(t, b)
	if f.Version != 2 || f.Alignment() != 32 || f.DataOffset()%32 != 0 {
		t.Fatalf("version %d alignment %d offset %d", f.Version, f.Alignment(), f.DataOffset())
	}
	if !bytes.Equal(rewrite(t, f), b) {
		t.Fatal("v2 round trip differs")
	}
}

// The exact bytes of a tiny file, computed by hand from the format.
func TestWriteExactBytes(t *testing.T) {
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 16})
	x := ctx.NewTensor1D(core.TypeF32, 2).SetName("x")
	copy(x.Float32s(), []float32{1, -2})
	md := testMetadata(t, []KV{{"a", uint8(7)}})
	got := writeBytes(t, md, []*core.Tensor{x})
	var want []byte
	le := binary.LittleEndian
	want = append(want, "GGUF"...)
	want = le.AppendUint32(want, 3)
	want = le.AppendUint64(want, 1) // tensors
	want = le.AppendUint64(want, 1) // keys
	want = le.AppendUint64(want, 1)
	want = append(want, 'a')
	want = le.AppendUint32(want, uint32(TypeUint8))
	want = append(want, 7)
	want = le.AppendUint64(want, 1)
	want = append(want, 'x')
	want = le.AppendUint32(want, 1)
	want = le.AppendUint64(want, 2)
	want = le.AppendUint32(want, uint32(core.TypeF32))
	want = le.AppendUint64(want, 0)
	for len(want)%32 != 0 {
		want = append(want, 0)
	}
	want = le.AppendUint32(want, 0x3f800000)
	want = le.AppendUint32(want, 0xc0000000)
	for len(want)%32 != 0 {
		want = append(want, 0)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("got\n%x\nwant\n%x", got, want)
	}
}

func TestTypedAccessors(t *testing.T) {
	f := readBytes(t, writeBytes(t, testMetadata(t, allKinds()), nil))
	if v, err := f.GetUint32("k.u32"); err != nil || v != 4000000000 {
		t.Fatalf("GetUint32: %v %v", v, err)
	}
	if v, err := f.GetString("k.str"); err != nil || v != "héllo\x00world" {
		t.Fatalf("GetString: %q %v", v, err)
	}
	if v, err := f.GetStrings("a.str"); err != nil || !reflect.DeepEqual(v, []string{"a", "", "ccc"}) {
		t.Fatalf("GetStrings: %q %v", v, err)
	}
	if v, err := Get[[]bool](&f.Metadata, "a.bool"); err != nil || !reflect.DeepEqual(v, []bool{true, false, true}) {
		t.Fatalf("Get[[]bool]: %v %v", v, err)
	}
	if v, err := f.GetFloat64("k.f64"); err != nil || v != -1e300 {
		t.Fatalf("GetFloat64: %v %v", v, err)
	}
	if v, err := f.GetUint("k.u16"); err != nil || v != 60000 {
		t.Fatalf("GetUint: %v %v", v, err)
	}
	if et, n, err := f.GetArrayLen("a.u32"); err != nil || et != TypeUint32 || n != 3 {
		t.Fatalf("GetArrayLen: %v %d %v", et, n, err)
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{second(f.GetUint32("missing")), `gguf: metadata key "missing" not found`},
		{second(f.GetInt32("k.u32")), `gguf: metadata key "k.u32" is u32, not i32`},
		{second(f.GetString("a.str")), `gguf: metadata key "a.str" is arr[str], not str`},
		{second(f.GetStrings("k.str")), `gguf: metadata key "k.str" is str, not arr[str]`},
		{second(f.GetUint("k.i8")), `gguf: metadata key "k.i8" is negative (-100)`},
		{second(f.GetBool("k.u8")), `gguf: metadata key "k.u8" is u8, not bool`},
	} {
		if c.err == nil || c.err.Error() != c.want {
			t.Errorf("got error %v, want %q", c.err, c.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestMetadataSet(t *testing.T) {
	var md Metadata
	for _, c := range []struct {
		key  string
		v    any
		want string
	}{
		{"", 1, "gguf: empty metadata key"},
		{"x", 1, `gguf: metadata key "x": int is not a GGUF value type`},
		{"x", [][]uint8{{1}}, `gguf: metadata key "x": [][]uint8 is not a GGUF value type`},
		{KeyAlignment, uint32(48), "gguf: general.alignment 48 is not a power of two"},
		{KeyAlignment, int32(32), "gguf: general.alignment must be u32, not i32"},
	} {
		if err := md.Set(c.key, c.v); err == nil || err.Error() != c.want {
			t.Errorf("Set(%q, %v): %v, want %q", c.key, c.v, err, c.want)
		}
	}
	_ = md.Set("a", uint8(1))
	_ = md.Set("b", uint8(2))
	_ = md.Set("c", uint8(3))
	_ = md.Set("a", "again")
	md.Delete("b")
	if !reflect.DeepEqual(md.KVs(), []KV{{"a", "again"}, {"c", uint8(3)}}) || md.Has("b") {
		t.Fatalf("after set/delete: %v", md.KVs())
	}
}

func TestWriteRejects(t *testing.T) {
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 16})
	a := ctx.NewTensor2D(core.TypeF32, 4, 4).SetName("a")
	b := ctx.NewTensor2D(core.TypeF32, 4, 4).SetName("a")
	p := ctx.Transpose(a)
	w := NewWriter()
	if err := w.AddTensor(a); err != nil {
		t.Fatal(err)
	}
	if err := w.AddTensor(b); err == nil || err.Error() != `gguf: duplicate tensor name "a"` {
		t.Fatalf("duplicate: %v", err)
	}
	if err := w.AddTensor(p); err == nil || !bytes.Contains([]byte(err.Error()), []byte("is not contiguous")) {
		t.Fatalf("transposed: %v", err)
	}
	if err := w.AddTensorNDims(ctx.NewTensor2D(core.TypeF32, 4, 4).SetName("c"), 1); err == nil ||
		err.Error() != `gguf: tensor "c": shape [4 4 1 1] with 1 dimensions is not writable` {
		t.Fatalf("ndims: %v", err)
	}
	w.Version = 1
	if _, err := w.WriteTo(&bytes.Buffer{}); err == nil || err.Error() != "gguf: cannot write GGUF version 1 (only 2 and 3)" {
		t.Fatalf("version 1: %v", err)
	}
}

func TestOpenFile(t *testing.T) {
	_, ts := testTensors(t, 3)
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := WriteFile(path, testMetadata(t, allKinds()), ts); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.Tensors) != len(ts) || f.Len() != len(allKinds()) {
		t.Fatalf("%d tensors %d keys", len(f.Tensors), f.Len())
	}
	if _, err := Open(filepath.Join(t.TempDir(), "none.gguf")); err == nil {
		t.Fatal("opening a missing file succeeded")
	}
}
