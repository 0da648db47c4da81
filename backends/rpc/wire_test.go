package rpc

import (
	"bytes"
	"encoding/hex"
	"testing"
)

func TestFixedRequestSizes(t *testing.T) {
	want := map[byte]int64{cmdAllocBuffer: 12, cmdGetAlignment: 4, cmdGetMaxSize: 4, cmdBufferGetBase: 8,
		cmdFreeBuffer: 8, cmdBufferClear: 9, cmdSetTensorHash: 312, cmdGetTensor: 312, cmdCopyTensor: 592,
		cmdGetDeviceMem: 4, cmdInitTensor: 296, cmdGetAllocSize: 3260, cmdHello: 24, cmdDeviceCount: 0,
		cmdGraphRecompute: 4, cmdMemsetTensor: 313, cmdSetTensor: -1, cmdGraphCompute: -1}
	for cmd, n := range want {
		if fixedRequestSize[cmd] != n {
			t.Errorf("%s: size %d, want %d", cmdName(cmd), fixedRequestSize[cmd], n)
		}
	}
	for _, c := range []byte{cmdSetTensor, cmdGraphCompute, cmdGraphRecompute} {
		if hasReply(c) {
			t.Errorf("%s must get no reply", cmdName(c))
		}
	}
	for _, c := range []byte{cmdFreeBuffer, cmdBufferClear, cmdMemsetTensor, cmdInitTensor, cmdGetTensor, cmdHello} {
		if !hasReply(c) {
			t.Errorf("%s gets a reply", cmdName(c))
		}
	}
}

// Frames as ggml's client writes them: a command byte, a 64-bit little-endian payload size, the
// payload.
func TestFrameBytes(t *testing.T) {
	hello := appendFrame(nil, cmdHello, make([]byte, 24))
	want, _ := hex.DecodeString("0e1800000000000000" + "000000000000000000000000000000000000000000000000")
	if !bytes.Equal(hello, want) {
		t.Errorf("HELLO frame % x, want % x", hello, want)
	}
	req := le.AppendUint32(nil, 0)
	req = le.AppendUint64(req, 352)
	alloc := appendFrame(nil, cmdAllocBuffer, req)
	want, _ = hex.DecodeString("000c00000000000000" + "00000000" + "6001000000000000")
	if !bytes.Equal(alloc, want) {
		t.Errorf("ALLOC_BUFFER frame % x, want % x", alloc, want)
	}
}

// rpc_tensor field offsets as ggml lays them out: ne and nb are 32-bit, buffer sits at the unaligned offset 12.
func TestTensorLayout(t *testing.T) {
	w := wireTensor{ID: 0x0102030405060708, Type: 8, Buffer: 0x1112131415161718, Ne: [4]uint32{32, 3, 1, 1},
		Nb: [4]uint32{34, 34, 102, 102}, Op: 29, Flags: 18, ViewSrc: 0x77, ViewOffs: 0x88, Data: 0x99, UseCount: 2}
	w.Params[0], w.Params[15] = 10, -1
	w.Src[0], w.Src[9] = 0x21, 0x22
	w.setName("a-name-that-is-much-longer-than-sixty-three-bytes-so-it-gets-cut-short-here")
	b := make([]byte, tensorSize)
	w.put(b)
	check := func(off int, want []byte) {
		t.Helper()
		if !bytes.Equal(b[off:off+len(want)], want) {
			t.Errorf("offset %d: % x, want % x", off, b[off:off+len(want)], want)
		}
	}
	check(0, le.AppendUint64(nil, w.ID))
	check(8, []byte{8, 0, 0, 0})
	check(12, le.AppendUint64(nil, w.Buffer))
	check(20, []byte{32, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0})
	check(36, []byte{34, 0, 0, 0, 34, 0, 0, 0, 102, 0, 0, 0, 102, 0, 0, 0})
	check(52, []byte{29, 0, 0, 0})
	check(56, []byte{10, 0, 0, 0})
	check(116, []byte{0xff, 0xff, 0xff, 0xff})
	check(120, []byte{18, 0, 0, 0})
	check(124, le.AppendUint64(nil, 0x21))
	check(196, le.AppendUint64(nil, 0x22))
	check(204, le.AppendUint64(nil, 0x77))
	check(212, le.AppendUint64(nil, 0x88))
	check(220, le.AppendUint64(nil, 0x99))
	check(228, []byte("a-name"))
	check(291, []byte{0})
	check(292, []byte{2, 0, 0, 0})
	if got := getTensor(b); got != w {
		t.Errorf("round trip: %+v, want %+v", got, w)
	}
	if n := w.name(); len(n) != 63 {
		t.Errorf("name kept %d bytes, want 63", len(n))
	}
}

// The graph of TestSerializeWorkedExample: 2 nodes and 5 tensors make a 1508-byte payload.
func TestGraphPayload(t *testing.T) {
	ts := make([]wireTensor, 5)
	for i := range ts {
		ts[i].ID = uint64(i + 1)
	}
	ts[2].Src = [maxSrc]uint64{1, 2}
	b := encodeGraph(0, []uint64{3, 5}, ts)
	if len(b) != 1508 {
		t.Fatalf("payload %d bytes, want 1508", len(b))
	}
	if le.Uint32(b[4:]) != 2 || le.Uint64(b[8:]) != 3 || le.Uint64(b[16:]) != 5 || le.Uint32(b[24:]) != 5 {
		t.Errorf("header % x", b[:28])
	}
	g, err := decodeGraph(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes) != 2 || len(g.Tensors) != 5 || g.Tensors[2].Src[1] != 2 {
		t.Errorf("decoded %+v", g)
	}
	if _, err := decodeGraph(b[:1507]); err == nil {
		t.Error("truncated payload accepted")
	}
	if _, err := decodeGraph(append(b, 1, 2, 3)); err != nil {
		t.Errorf("trailing bytes must be ignored: %v", err)
	}
	huge := bytes.Clone(b[:12])
	le.PutUint32(huge[4:], 0)
	le.PutUint32(huge[8:], 0xffffffff)
	if _, err := decodeGraph(huge); err == nil {
		t.Error("2^32-1 tensors in 12 bytes accepted")
	}
}

func TestFNV1a(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
	}{{"", 0xcbf29ce484222325}, {"a", 0xaf63dc4c8601ec8c}, {"foobar", 0x85944171f73967e8}} {
		if got := fnv1a64([]byte(c.in)); got != c.want {
			t.Errorf("fnv1a64(%q) = %#x, want %#x", c.in, got, c.want)
		}
	}
}

func TestDecodeRequest(t *testing.T) {
	ok := appendFrame(nil, cmdHello, make([]byte, 24))
	if _, err := decodeRequest(ok); err != nil {
		t.Fatal(err)
	}
	bad := [][]byte{
		appendFrame(nil, cmdHello, make([]byte, 23)),
		appendFrame(nil, cmdDeviceCount, make([]byte, 4)),
		appendFrame(nil, 18, nil),
		appendFrame(nil, 255, nil),
		appendFrame(nil, cmdSetTensor, make([]byte, 303)),
		appendFrame(nil, cmdGraphCompute, make([]byte, 11)),
		ok[:20],
	}
	for i, b := range bad {
		if _, err := decodeRequest(b); err == nil {
			t.Errorf("case %d (% x...) accepted", i, b[:min(len(b), 12)])
		}
	}
}

func TestExtentOverflow(t *testing.T) {
	// The notes' wrapping example: i8, ne [2^32-1, 4, 1, 1], all nb 2^32-1 wraps to 0 in ggml.
	if n, ok := extent(24, [4]uint32{0xffffffff, 4, 1, 1}, [4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}); ok {
		t.Errorf("wrapping extent accepted as %d", n)
	}
	if n, ok := extent(0, [4]uint32{3, 2, 1, 1}, [4]uint32{4, 12, 24, 24}); !ok || n != 24 {
		t.Errorf("f32 [3,2]: %d %v, want 24", n, ok)
	}
	if n, ok := extent(8, [4]uint32{64, 2, 1, 1}, [4]uint32{34, 68, 136, 136}); !ok || n != 136 {
		t.Errorf("q8_0 [64,2]: %d %v, want 136", n, ok)
	}
	if n, ok := extent(0, [4]uint32{0, 5, 1, 1}, [4]uint32{4, 0, 0, 0}); !ok || n != 0 {
		t.Errorf("empty: %d %v", n, ok)
	}
}
