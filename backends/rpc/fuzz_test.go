package rpc

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// fuzzConn is a connection state past HELLO with one 4 KiB buffer (handle fuzzHandle at fuzzBase),
// replies discarded. Requests go straight to handle, so a panic fails the fuzz run.
func fuzzConn(tb testing.TB) *conn {
	be, err := cpu.New(cpu.Options{Threads: 1})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { be.Close() })
	// MaxConnBytes: a fuzzed ALLOC_BUFFER may ask for anything up to the machine's memory, which
	// two fuzz workers touching it at once can exhaust (CI's run was killed that way).
	c := &conn{s: &Server{Backends: []core.Backend{be}, MaxConnBytes: 64 << 20}, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		w: bufio.NewWriter(io.Discard), bufs: map[uint64]*sbuf{}, nextBase: 1 << 20, last: map[uint32]*storedGraph{}, hello: true}
	if err := c.alloc(le.AppendUint64(le.AppendUint32(nil, 0), 4096)); err != nil {
		tb.Fatal(err)
	}
	if c.bufs[fuzzHandle] == nil || c.bufs[fuzzHandle].base != fuzzBase {
		tb.Fatalf("fuzz buffer not at handle %#x base %#x: %+v", fuzzHandle, fuzzBase, c.bufs)
	}
	return c
}

const (
	fuzzHandle = 1<<8 | 0x5a
	fuzzBase   = 1 << 20
)

func (c *conn) freeAll() {
	for h, b := range c.bufs {
		if b.buf != nil {
			_ = b.buf.Free()
		}
		delete(c.bufs, h)
	}
}

// seedGraphs are valid and near-valid graph payloads over the fuzz buffer.
func seedGraphs() [][]byte {
	a, b, r := f32Tensor(1, fuzzHandle, fuzzBase, 4, 2), f32Tensor(2, fuzzHandle, fuzzBase+64, 4, 2), f32Tensor(3, fuzzHandle, fuzzBase+128, 4, 2)
	r.Op, r.Src[0], r.Src[1], r.Flags = ggmlOpAdd, 1, 2, flagCompute
	mm := f32Tensor(4, fuzzHandle, fuzzBase+256, 2, 2)
	mm.Op, mm.Src[0], mm.Src[1], mm.Flags = ggmlOpMulMat, 1, 2, flagCompute
	u := f32Tensor(5, fuzzHandle, fuzzBase+512, 4, 2)
	u.Op, u.Src[0], u.Flags, u.Params[0] = ggmlOpUnary, 3, flagCompute, 10
	v := f32Tensor(6, fuzzHandle, fuzzBase+16, 4)
	v.Op, v.Src[0], v.ViewSrc, v.ViewOffs, v.Flags, v.Params[0] = ggmlOpView, 1, 1, 16, flagCompute, 16
	cast := wireTensor{ID: 7, Type: 1, Buffer: fuzzHandle, Data: fuzzBase + 1024, Ne: [4]uint32{4, 2, 1, 1}, Nb: [4]uint32{2, 8, 16, 16},
		Op: ggmlOpCpy, Flags: flagCompute}
	cast.Src[0], cast.Src[1] = 1, 7
	return [][]byte{
		encodeGraph(0, []uint64{3}, []wireTensor{a, b, r}),
		encodeGraph(0, []uint64{3, 4, 5}, []wireTensor{a, b, r, mm, u}),
		encodeGraph(0, []uint64{6, 7}, []wireTensor{a, v, cast}),
		encodeGraph(0, nil, nil),
		encodeGraph(0, []uint64{3, 3, 4, 3}, []wireTensor{a, b, r, mm}), // a repeated node: computed as segments
	}
}

func seedRequests() [][]byte {
	a := f32Tensor(1, fuzzHandle, fuzzBase, 4, 2)
	out := [][]byte{
		appendFrame(nil, cmdDeviceCount),
		appendFrame(nil, cmdGetAlignment, le.AppendUint32(nil, 0)),
		appendFrame(nil, cmdAllocBuffer, le.AppendUint64(le.AppendUint32(nil, 0), 128)),
		appendFrame(nil, cmdBufferGetBase, u64(fuzzHandle)),
		appendFrame(nil, cmdBufferClear, u64(fuzzHandle), []byte{7}),
		appendFrame(nil, cmdSetTensor, a.bytes(), u64(4), make([]byte, 8)),
		appendFrame(nil, cmdGetTensor, a.bytes(), u64(0), u64(32)),
		appendFrame(nil, cmdMemsetTensor, a.bytes(), u64(0), u64(32), []byte{1}),
		appendFrame(nil, cmdCopyTensor, a.bytes(), f32Tensor(2, fuzzHandle, fuzzBase+64, 4, 2).bytes()),
		appendFrame(nil, cmdInitTensor, a.bytes()),
		appendFrame(nil, cmdGetAllocSize, le.AppendUint32(nil, 0), a.bytes(), make([]byte, 2960)),
		appendFrame(nil, cmdGraphRecompute, le.AppendUint32(nil, 0)),
		appendFrame(nil, cmdFreeBuffer, u64(fuzzHandle)),
	}
	for _, g := range seedGraphs() {
		out = append(out, appendFrame(nil, cmdGraphCompute, g))
	}
	return out
}

// FuzzDecodeRequest decodes one frame and, when it is well formed, executes it on a connection with
// a live buffer: nothing may panic, whatever the bytes.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range seedRequests() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := decodeRequest(data)
		if err != nil {
			return
		}
		c := fuzzConn(t)
		defer c.freeAll()
		_ = c.handle(req)
	})
}

// FuzzDecodeGraph decodes a GRAPH_COMPUTE payload and rebuilds and runs it over a live buffer; a
// graph that ran runs again with GRAPH_RECOMPUTE.
func FuzzDecodeGraph(f *testing.F) {
	for _, s := range seedGraphs() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := decodeGraph(data)
		if err != nil {
			return
		}
		c := fuzzConn(t)
		defer c.freeAll()
		if len(g.Tensors) > 64 {
			return
		}
		if c.graphCompute(data) == nil {
			// The graph is stored for its device: GRAPH_RECOMPUTE runs it again.
			if err := c.graphRecompute(data[:4]); err != nil {
				t.Fatalf("a graph that computed does not recompute: %v", err)
			}
		}
	})
}

// The seeds must do what they are meant to: the valid graphs compute.
func TestFuzzSeedsValid(t *testing.T) {
	for i, g := range seedGraphs() {
		c := fuzzConn(t)
		if err := c.graphCompute(g); err != nil {
			t.Errorf("seed graph %d: %v", i, err)
		}
		c.freeAll()
	}
	if os.Getenv("TANDEM_WRITE_CORPUS") == "1" {
		write := func(name string, seeds [][]byte) {
			dir := filepath.Join("testdata", "fuzz", name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for i, s := range seeds {
				body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		write("FuzzDecodeRequest", seedRequests())
		write("FuzzDecodeGraph", seedGraphs())
	}
}
