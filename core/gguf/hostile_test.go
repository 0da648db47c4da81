package gguf

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// raw builds GGUF bytes field by field, valid or not.
type raw struct{ b []byte }

func (r *raw) u32(v uint32) *raw { r.b = binary.LittleEndian.AppendUint32(r.b, v); return r }
func (r *raw) u64(v uint64) *raw { r.b = binary.LittleEndian.AppendUint64(r.b, v); return r }
func (r *raw) str(s string) *raw { r.u64(uint64(len(s))); r.b = append(r.b, s...); return r }
func (r *raw) bytes(b ...byte) *raw {
	r.b = append(r.b, b...)
	return r
}
func (r *raw) header(version uint32, nt, nkv uint64) *raw {
	r.b = append(r.b, "GGUF"...)
	return r.u32(version).u64(nt).u64(nkv)
}

// tensor appends a tensor info.
func (r *raw) tensor(name string, typ core.Type, off uint64, ne ...int64) *raw {
	r.str(name).u32(uint32(len(ne)))
	for _, n := range ne {
		r.u64(uint64(n))
	}
	return r.u32(uint32(typ)).u64(off)
}

// data pads to 32 and appends n bytes.
func (r *raw) data(n int) *raw {
	for len(r.b)%32 != 0 {
		r.b = append(r.b, 0)
	}
	r.b = append(r.b, make([]byte, n)...)
	return r
}

func hdr(nt, nkv uint64) *raw { return new(raw).header(3, nt, nkv) }

func readErr(b []byte) error {
	_, err := Read(bytes.NewReader(b), int64(len(b)))
	return err
}

func TestHostileFiles(t *testing.T) {
	f32 := core.TypeF32
	cases := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "gguf: file of 0 bytes is too short for the magic \"GGUF\""},
		{"bad magic", append([]byte("GGML"), make([]byte, 20)...), `gguf: bad magic "GGML", want "GGUF" (not a GGUF file)`},
		{"version 1", new(raw).header(1, 0, 0).b, "gguf: GGUF version 1 is not supported (only versions 2 and 3)"},
		{"version 0", new(raw).header(0, 0, 0).b, "gguf: unknown GGUF version 0 (only versions 2 and 3 are supported)"},
		{"version 4", new(raw).header(4, 0, 0).b, "gguf: unknown GGUF version 4 (only versions 2 and 3 are supported)"},
		{"big endian", new(raw).header(3<<24, 0, 0).b, "gguf: unknown GGUF version 0x3000000 (a big-endian file? only little-endian versions 2 and 3 are supported)"},
		{"truncated header", []byte("GGUF\x03\x00\x00\x00\x00"), "gguf: file truncated at byte 8 reading tensor count: 8 bytes needed, 1 left"},
		{"too many keys", hdr(0, 1<<62).b, "gguf: header: 4611686018427387904 metadata keys cannot fit in the 0 bytes left in the file"},
		{"too many tensors", hdr(1<<40, 1).str("k").u32(0).bytes(1).b,
			"gguf: header: 1099511627776 tensors (after 1 metadata keys) cannot fit in the 14 bytes left in the file"},
		{"key length past end", hdr(0, 1).u64(1<<60).bytes(0, 0, 0, 0, 0, 0).b,
			"gguf: metadata key 0 at byte 24 has length 1152921504606846976, past the end of the file (6 bytes left)"},
		{"empty key", hdr(0, 1).str("").u32(0).bytes(1, 2, 3, 4, 5, 6).b, "gguf: metadata key 0 at byte 24 is empty"},
		{"duplicate key", hdr(0, 2).str("a").u32(0).bytes(1).str("a").u32(0).bytes(2).b,
			`gguf: duplicate metadata key "a" (entries 0 and 1)`},
		{"unknown value type", hdr(0, 1).str("a").u32(13).bytes(1).b, `gguf: metadata key "a" has unknown value type 13`},
		{"string value past end", hdr(0, 1).str("a").u32(uint32(TypeString)).u64(100).bytes(1).b,
			`gguf: value of metadata key "a" at byte 37 has length 100, past the end of the file (1 bytes left)`},
		{"array of arrays", hdr(0, 1).str("a").u32(uint32(TypeArray)).u32(uint32(TypeArray)).u64(1).u32(0).b,
			`gguf: metadata key "a" is an array of arrays, which GGUF does not allow`},
		{"array unknown type", hdr(0, 1).str("a").u32(uint32(TypeArray)).u32(77).u64(1).b,
			`gguf: metadata key "a" is an array of unknown value type 77`},
		{"array count past end", hdr(0, 1).str("a").u32(uint32(TypeArray)).u32(uint32(TypeUint32)).u64(1<<61).bytes(1, 2, 3, 4).b,
			`gguf: array of metadata key "a" has 2305843009213693952 u32 elements, past the end of the file (4 bytes left)`},
		{"string array count past end", hdr(0, 1).str("a").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(1<<62).bytes(1, 2, 3, 4).b,
			`gguf: array of metadata key "a" has 4611686018427387904 strings, past the end of the file (4 bytes left)`},
		{"truncated scalar", hdr(0, 1).str("a").u32(uint32(TypeUint64)).bytes(1, 2).b,
			`gguf: file truncated at byte 37 reading value of metadata key "a": 8 bytes needed, 2 left`},
		{"alignment type", hdr(0, 1).str(KeyAlignment).u32(uint32(TypeUint64)).u64(32).b,
			"gguf: general.alignment must be u32, but it is u64"},
		{"alignment not power of two", hdr(0, 1).str(KeyAlignment).u32(uint32(TypeUint32)).u32(24).b,
			"gguf: general.alignment 24 is not a power of two"},
		{"alignment zero", hdr(0, 1).str(KeyAlignment).u32(uint32(TypeUint32)).u32(0).b,
			"gguf: general.alignment 0 is not a power of two"},
		{"tensor name too long", hdr(1, 0).tensor(strings.Repeat("n", 64), f32, 0, 1).data(4).b,
			"gguf: tensor 0: name of 64 bytes is too long (at most 63)"},
		{"duplicate tensor", hdr(2, 0).tensor("t", f32, 0, 8).tensor("t", f32, 32, 8).data(64).b,
			`gguf: duplicate tensor name "t" (tensors 0 and 1)`},
		{"five dims", hdr(1, 0).tensor("t", f32, 0, 1, 1, 1, 1, 1).data(4).b, `gguf: tensor "t" has 5 dimensions, want 1 to 4`},
		{"zero dims", hdr(1, 0).tensor("t", f32, 0).data(8).b, `gguf: tensor "t" has 0 dimensions, want 1 to 4`},
		{"zero elements", hdr(1, 0).tensor("t", f32, 0, 4, 0).data(8).b, `gguf: tensor "t": dimension 1 has 0 elements, want at least 1`},
		{"negative elements", hdr(1, 0).tensor("t", f32, 0, -4).data(8).b, `gguf: tensor "t": dimension 0 has -4 elements, want at least 1`},
		{"elements overflow", hdr(1, 0).tensor("t", f32, 0, 1<<32, 1<<31, 4).data(8).b,
			`gguf: tensor "t": shape [4294967296 2147483648 4] has more than 9223372036854775807 elements`},
		{"bytes overflow", hdr(1, 0).tensor("t", f32, 0, 1<<62).data(8).b,
			`gguf: tensor "t": shape [4611686018427387904] of f32 is more than 9223372036854775807 bytes`},
		{"unknown tensor type", hdr(1, 0).tensor("t", core.Type(99), 0, 4).data(8).b, `gguf: tensor "t" has unknown type 99`},
		{"removed tensor type", hdr(1, 0).tensor("t", core.Type(4), 0, 32).data(8).b, `gguf: tensor "t" has unknown type 4`},
		{"negative tensor type", hdr(1, 0).tensor("t", core.Type(-1), 0, 4).data(8).b, `gguf: tensor "t" has unknown type 4294967295`},
		{"partial block", hdr(1, 0).tensor("t", core.TypeQ8_0, 0, 33).data(64).b,
			`gguf: tensor "t": row of 33 elements is not a multiple of the q8_0 block size 32`},
		{"misaligned offset", hdr(1, 0).tensor("t", f32, 4, 2).data(64).b,
			`gguf: tensor "t": data offset 4 is not a multiple of the alignment 32`},
		{"huge offset", hdr(1, 0).tensor("t", f32, math.MaxUint64-31, 2).data(64).b,
			`gguf: tensor "t": data offset 18446744073709551584 is past the end of the file`},
		{"offset outside data", hdr(1, 0).tensor("t", f32, 64, 2).data(64).b,
			`gguf: tensor "t": data [64,72) lies outside the 64-byte data section (file truncated?)`},
		{"data past end", hdr(1, 0).tensor("t", f32, 0, 32).data(64).b,
			`gguf: tensor "t": data [0,128) lies outside the 64-byte data section (file truncated?)`},
		{"offset near max", hdr(1, 0).tensor("t", f32, 1<<62, 1<<60).data(64).b,
			`gguf: tensor "t": data [4611686018427387904,9223372036854775807) lies outside the 64-byte data section (file truncated?)`},
		{"overlap", hdr(2, 0).tensor("a", f32, 0, 16).tensor("b", f32, 32, 16).data(128).b,
			`gguf: tensors "a" [0,64) and "b" [32,96) overlap in the data section`},
		{"no data section", hdr(1, 0).tensor("t", f32, 0, 2).b,
			"gguf: file truncated: the data section starts at byte 64 but the file has 57 bytes"},
	}
	for _, c := range cases {
		err := readErr(c.file)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v\nwant %s", c.name, err, c.want)
		}
	}
}

// Every truncation of a valid file is an error, never a panic, and names the truncation.
func TestTruncatedAnywhere(t *testing.T) {
	_, ts := testTensors(t, 4)
	b := writeBytes(t, testMetadata(t, allKinds()), ts)
	f := readBytes(t, b)
	lastEnd := f.DataOffset() + f.Tensors[len(f.Tensors)-1].Offset + f.Tensors[len(f.Tensors)-1].Size
	for n := 0; n < len(b); n++ {
		err := readErr(b[:n])
		if int64(n) >= lastEnd { // only the final padding is missing: still a valid file
			if err != nil {
				t.Fatalf("cut at %d (after the last tensor's data): %v", n, err)
			}
			continue
		}
		if err == nil {
			t.Fatalf("cut at %d of %d: no error", n, len(b))
		}
		msg := err.Error()
		if !strings.Contains(msg, "truncated") && !strings.Contains(msg, "past the end") &&
			!strings.Contains(msg, "cannot fit") && !strings.Contains(msg, "too short") {
			t.Fatalf("cut at %d: error does not say the file is cut short: %v", n, err)
		}
	}
}

// Open names the file in its errors.
func TestOpenErrorNamesFile(t *testing.T) {
	path := t.TempDir() + "/bad.gguf"
	if err := writeFileBytes(path, new(raw).header(1, 0, 0).b); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path)
	if err == nil || err.Error() != "gguf: GGUF version 1 is not supported (only versions 2 and 3) (file "+path+")" {
		t.Fatalf("got %v", err)
	}
}
