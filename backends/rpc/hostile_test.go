package rpc

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"math"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// countingBackend wraps a backend so the test can see buffers allocated and freed by the server.
type countingBackend struct {
	core.Backend
	bt *countingBT
}

type countingBT struct {
	core.BufferType
	live atomic.Int64
}

type countingBuf struct {
	core.HostBuffer
	bt    *countingBT
	freed atomic.Bool
}

func (b *countingBackend) DefaultBufferType() core.BufferType { return b.bt }

func (bt *countingBT) Alloc(size int64) (core.Buffer, error) {
	buf, err := bt.BufferType.Alloc(size)
	if err != nil {
		return nil, err
	}
	bt.live.Add(1)
	return &countingBuf{HostBuffer: buf.(core.HostBuffer), bt: bt}, nil
}

func (b *countingBuf) Free() error {
	if b.freed.Swap(true) {
		panic("buffer freed twice")
	}
	b.bt.live.Add(-1)
	return b.HostBuffer.Free()
}

type hostileRig struct {
	t    *testing.T
	addr string
	bt   *countingBT
}

func newHostileRig(t *testing.T, opts ...func(*Server)) *hostileRig {
	be, err := cpu.New(cpu.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	cb := &countingBackend{Backend: be, bt: &countingBT{BufferType: be.DefaultBufferType()}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s := &Server{Backends: []core.Backend{cb}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), MaxPayload: 1 << 24}
	for _, o := range opts {
		o(s)
	}
	go func() { s.Serve(ctx, l); close(done) }()
	t.Cleanup(func() { cancel(); <-done; be.Close() })
	t.Cleanup(func() {
		if n := s.panicked.Load(); n != 0 {
			t.Errorf("server recovered from %d panics", n)
		}
	})
	return &hostileRig{t: t, addr: l.Addr().String(), bt: cb.bt}
}

type rawConn struct {
	t  *testing.T
	nc net.Conn
	r  *bufio.Reader
}

func (h *hostileRig) raw(hello bool) *rawConn {
	nc, err := net.Dial("tcp", h.addr)
	if err != nil {
		h.t.Fatal(err)
	}
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	c := &rawConn{t: h.t, nc: nc, r: bufio.NewReader(nc)}
	h.t.Cleanup(func() { nc.Close() })
	if hello {
		if r := c.call(cmdHello, make([]byte, 24)); len(r) != 28 || r[0] != 5 || r[1] != 1 {
			h.t.Fatalf("hello reply % x", r)
		}
	}
	return c
}

func (c *rawConn) send(cmd byte, p ...[]byte) {
	if _, err := c.nc.Write(appendFrame(nil, cmd, p...)); err != nil {
		c.t.Fatal(err)
	}
}

// call sends a request and returns the reply payload, or nil if the connection was closed.
func (c *rawConn) call(cmd byte, p ...[]byte) []byte {
	c.send(cmd, p...)
	var lb [8]byte
	if _, err := io.ReadFull(c.r, lb[:]); err != nil {
		return nil
	}
	out := make([]byte, le.Uint64(lb[:]))
	if _, err := io.ReadFull(c.r, out); err != nil {
		return nil
	}
	if out == nil {
		out = []byte{}
	}
	return out
}

// closed reports whether the server closed the connection (EOF on the next read).
func (c *rawConn) closed() bool {
	_ = c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := c.r.ReadByte()
	return err != nil && !isTimeout(err)
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func (c *rawConn) alloc(size uint64) (handle, base uint64) {
	req := le.AppendUint64(le.AppendUint32(nil, 0), size)
	r := c.call(cmdAllocBuffer, req)
	if len(r) != 16 {
		c.t.Fatalf("alloc reply % x", r)
	}
	handle = le.Uint64(r)
	if handle == 0 {
		return 0, 0
	}
	b := c.call(cmdBufferGetBase, u64(handle))
	if len(b) != 8 {
		c.t.Fatalf("base reply % x", b)
	}
	return handle, le.Uint64(b)
}

func f32Tensor(id, buf, data uint64, ne ...uint32) wireTensor {
	w := wireTensor{ID: id, Type: 0, Buffer: buf, Data: data}
	w.Ne = [4]uint32{1, 1, 1, 1}
	copy(w.Ne[:], ne)
	w.Nb[0] = 4
	for i := 1; i < 4; i++ {
		w.Nb[i] = w.Nb[i-1] * w.Ne[i-1]
	}
	return w
}

func (w wireTensor) bytes() []byte {
	b := make([]byte, tensorSize)
	w.put(b)
	return b
}

// goodRun checks the server still serves: HELLO, alloc, set, a graph ADD, get.
func (h *hostileRig) goodRun(c *rawConn) {
	h.t.Helper()
	hd, base := c.alloc(64)
	if hd == 0 {
		h.t.Fatal("alloc failed")
	}
	a := f32Tensor(1, hd, base, 4)
	b := f32Tensor(2, hd, base+16, 4)
	r := f32Tensor(3, hd, base+32, 4)
	r.Op, r.Src[0], r.Src[1], r.Flags = ggmlOpAdd, 1, 2, flagCompute
	vals := make([]byte, 0, 16)
	for _, v := range []float32{1, 2, 3, 4} {
		vals = le.AppendUint32(vals, math.Float32bits(v))
	}
	c.send(cmdSetTensor, a.bytes(), u64(0), vals)
	c.send(cmdSetTensor, b.bytes(), u64(0), vals)
	c.send(cmdGraphCompute, encodeGraph(0, []uint64{3}, []wireTensor{a, b, r}))
	out := c.call(cmdGetTensor, r.bytes(), u64(0), u64(16))
	if len(out) != 16 {
		h.t.Fatalf("get reply % x", out)
	}
	for i, want := range []float32{2, 4, 6, 8} {
		if got := math.Float32frombits(le.Uint32(out[4*i:])); got != want {
			h.t.Fatalf("r[%d] = %v, want %v", i, got, want)
		}
	}
	if c.call(cmdFreeBuffer, u64(hd)) == nil {
		h.t.Fatal("free failed")
	}
}

// Hostile requests each close their own connection; the server keeps serving a connection opened
// before them and new ones after, and frees every buffer of the closed connections.
func TestHostileRequests(t *testing.T) {
	h := newHostileRig(t)
	keeper := h.raw(true)
	h.goodRun(keeper)

	type attack struct {
		name string
		run  func(c *rawConn) // leaves the connection closed by the server (checked)
	}
	graphWith := func(c *rawConn, mutate func(hd, base uint64) ([]uint64, []wireTensor)) {
		hd, base := c.alloc(256)
		nodes, ts := mutate(hd, base)
		c.send(cmdGraphCompute, encodeGraph(0, nodes, ts))
		c.send(cmdDeviceCount)
	}
	add := func(hd, base uint64) (wireTensor, wireTensor, wireTensor) {
		a, b, r := f32Tensor(1, hd, base, 4), f32Tensor(2, hd, base+16, 4), f32Tensor(3, hd, base+32, 4)
		r.Op, r.Src[0], r.Src[1], r.Flags = ggmlOpAdd, 1, 2, flagCompute
		return a, b, r
	}
	attacks := []attack{
		{"first command not HELLO", func(c *rawConn) { c.send(cmdDeviceCount) }},
		{"second HELLO", func(c *rawConn) { c.send(cmdHello, make([]byte, 24)) }},
		{"unknown command 18", func(c *rawConn) { c.send(18) }},
		{"unknown command 255", func(c *rawConn) { c.send(255, make([]byte, 4)) }},
		{"DEVICE_COUNT with payload", func(c *rawConn) { c.send(cmdDeviceCount, make([]byte, 4)) }},
		{"GET_ALIGNMENT with 8 bytes", func(c *rawConn) { c.send(cmdGetAlignment, make([]byte, 8)) }},
		{"device out of range", func(c *rawConn) { c.send(cmdGetDeviceMem, le.AppendUint32(nil, 7)) }},
		{"truncated message", func(c *rawConn) {
			c.nc.Write(appendFrame(nil, cmdGetTensor, make([]byte, 312))[:100])
			c.nc.(*net.TCPConn).CloseWrite()
		}},
		{"huge declared payload", func(c *rawConn) {
			hdr := []byte{cmdSetTensor}
			c.nc.Write(le.AppendUint64(hdr, 1<<60))
		}},
		{"forged buffer id", func(c *rawConn) { c.send(cmdBufferGetBase, u64(0x5a5a)) }},
		{"double free", func(c *rawConn) {
			hd, _ := c.alloc(16)
			c.call(cmdFreeBuffer, u64(hd))
			c.send(cmdFreeBuffer, u64(hd))
		}},
		{"tensor past its buffer", func(c *rawConn) {
			hd, base := c.alloc(64)
			c.send(cmdSetTensor, f32Tensor(1, hd, base, 32).bytes(), u64(0), make([]byte, 4))
		}},
		{"data below base", func(c *rawConn) {
			hd, base := c.alloc(64)
			c.send(cmdGetTensor, f32Tensor(1, hd, base-4, 2).bytes(), u64(0), u64(4))
		}},
		{"read past the tensor inside the buffer", func(c *rawConn) {
			hd, base := c.alloc(64)
			c.send(cmdGetTensor, f32Tensor(1, hd, base, 2).bytes(), u64(0), u64(16))
		}},
		{"memset past the tensor", func(c *rawConn) {
			hd, base := c.alloc(64)
			c.send(cmdMemsetTensor, f32Tensor(1, hd, base, 2).bytes(), u64(4), u64(8), []byte{0})
		}},
		{"wrapping extent", func(c *rawConn) {
			hd, base := c.alloc(64)
			w := wireTensor{ID: 1, Type: 24, Buffer: hd, Data: base, Ne: [4]uint32{0xffffffff, 4, 1, 1},
				Nb: [4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}}
			c.send(cmdSetTensor, w.bytes(), u64(0), make([]byte, 1))
		}},
		{"removed type 4", func(c *rawConn) {
			hd, base := c.alloc(64)
			w := f32Tensor(1, hd, base, 1)
			w.Type = 4
			c.send(cmdSetTensor, w.bytes(), u64(0), make([]byte, 1))
		}},
		{"copy larger than destination room", func(c *rawConn) {
			hd, base := c.alloc(64)
			c.send(cmdCopyTensor, f32Tensor(1, hd, base, 8).bytes(), f32Tensor(2, hd, base+48, 4).bytes())
		}},
		{"graph with a cycle", func(c *rawConn) {
			graphWith(c, func(hd, base uint64) ([]uint64, []wireTensor) {
				a, b, r := add(hd, base)
				a.Op, a.Src[0], a.Flags = ggmlOpAdd, 3, flagCompute
				a.Src[1] = 2
				return []uint64{1, 3}, []wireTensor{a, b, r}
			})
		}},
		{"graph with a self-source that is not a cast", func(c *rawConn) {
			graphWith(c, func(hd, base uint64) ([]uint64, []wireTensor) {
				a, b, r := add(hd, base)
				r.Src[1] = 3
				return []uint64{3}, []wireTensor{a, b, r}
			})
		}},
		{"graph with an out-of-range source", func(c *rawConn) {
			graphWith(c, func(hd, base uint64) ([]uint64, []wireTensor) {
				a, b, r := add(hd, base)
				r.Src[1] = 99
				return []uint64{3}, []wireTensor{a, b, r}
			})
		}},
		{"graph with node id 0", func(c *rawConn) {
			graphWith(c, func(hd, base uint64) ([]uint64, []wireTensor) {
				a, b, r := add(hd, base)
				return []uint64{0}, []wireTensor{a, b, r}
			})
		}},
		{"graph with an unknown op", func(c *rawConn) {
			graphWith(c, func(hd, base uint64) ([]uint64, []wireTensor) {
				a, b, r := add(hd, base)
				r.Op = 200
				return []uint64{3}, []wireTensor{a, b, r}
			})
		}},
		{"graph with an unknown unary kind", func(c *rawConn) {
			graphWith(c, func(hd, base uint64) ([]uint64, []wireTensor) {
				a, b, r := add(hd, base)
				r.Op, r.Src[1], r.Params[0] = ggmlOpUnary, 0, 30
				return []uint64{3}, []wireTensor{a, b, r}
			})
		}},
		{"graph with mismatched shapes", func(c *rawConn) {
			graphWith(c, func(hd, base uint64) ([]uint64, []wireTensor) {
				a, b, r := add(hd, base)
				b.Ne[0], b.Nb[1], b.Nb[2], b.Nb[3] = 3, 12, 12, 12
				r.Op = ggmlOpMulMat
				return []uint64{3}, []wireTensor{a, b, r}
			})
		}},
		{"graph with an unknown MUL_MAT precision", func(c *rawConn) {
			graphWith(c, func(hd, base uint64) ([]uint64, []wireTensor) {
				a, b, r := add(hd, base)
				r = f32Tensor(3, hd, base+32, 1)
				r.Op, r.Src[0], r.Src[1], r.Flags = ggmlOpMulMat, 1, 2, flagCompute
				r.Params[0] = 3 // neither ggml's 0 and 10 nor tandem's 16
				return []uint64{3}, []wireTensor{a, b, r}
			})
		}},
		{"graph whose node lies outside its buffer", func(c *rawConn) {
			graphWith(c, func(hd, base uint64) ([]uint64, []wireTensor) {
				a, b, r := add(hd, base)
				r.Data = base + 250
				return []uint64{3}, []wireTensor{a, b, r}
			})
		}},
		{"graph whose view does not sit on its source", func(c *rawConn) {
			graphWith(c, func(hd, base uint64) ([]uint64, []wireTensor) {
				a, _, _ := add(hd, base)
				v := f32Tensor(2, hd, base+8, 2)
				v.Op, v.Src[0], v.ViewSrc, v.ViewOffs, v.Flags = ggmlOpView, 1, 1, 4, flagCompute
				v.Params[0] = 4
				return []uint64{2}, []wireTensor{a, v}
			})
		}},
		{"graph with a huge tensor count", func(c *rawConn) {
			p := make([]byte, 12)
			le.PutUint32(p[8:], 0xffffffff)
			c.send(cmdGraphCompute, p)
		}},
		{"recompute after the graph's buffer was freed", func(c *rawConn) {
			hd, base := c.alloc(64)
			a, b, r := add(hd, base)
			c.send(cmdGraphCompute, encodeGraph(0, []uint64{3}, []wireTensor{a, b, r}))
			if c.call(cmdFreeBuffer, u64(hd)) == nil {
				c.t.Fatal("free failed")
			}
			c.send(cmdGraphRecompute, le.AppendUint32(nil, 0))
		}},
		{"recompute without a graph", func(c *rawConn) { c.send(cmdGraphRecompute, le.AppendUint32(nil, 0)) }},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			c := h.raw(a.name != "first command not HELLO")
			c.t = t
			a.run(c)
			if !c.closed() {
				t.Errorf("connection still open after %s", a.name)
			}
			h.goodRun(h.raw(true))
		})
	}
	h.goodRun(keeper)

	// A failed allocation is a soft error: reply {0, 0}, connection kept.
	c := h.raw(true)
	if hd, _ := c.alloc(1 << 50); hd != 0 {
		t.Error("2^50-byte allocation succeeded")
	}
	h.goodRun(c)
	// An unknown hash is a soft miss.
	if r := c.call(cmdSetTensorHash, make([]byte, 312)); len(r) != 1 || r[0] != 0 {
		t.Errorf("SET_TENSOR_HASH miss replied % x", r)
	}

	// Closed connections' buffers are all freed; only the two open connections' (none live) remain.
	keeper.nc.Close()
	c.nc.Close()
	deadline := time.Now().Add(5 * time.Second)
	for h.bt.live.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := h.bt.live.Load(); n != 0 {
		t.Errorf("%d buffers still allocated after every connection closed", n)
	}
}

// A cast (CPY whose src1 is the node itself) and GRAPH_RECOMPUTE work on a live graph.
func TestCastSelfSourceAndRecompute(t *testing.T) {
	h := newHostileRig(t)
	c := h.raw(true)
	hd, base := c.alloc(64)
	a := f32Tensor(1, hd, base, 4)
	r := wireTensor{ID: 2, Type: 26, Buffer: hd, Data: base + 32, Ne: [4]uint32{4, 1, 1, 1}, Nb: [4]uint32{4, 16, 16, 16},
		Op: ggmlOpCpy, Flags: flagCompute}
	r.Src[0], r.Src[1] = 1, 2
	set := func(vals ...float32) {
		b := make([]byte, 0, 16)
		for _, v := range vals {
			b = le.AppendUint32(b, math.Float32bits(v))
		}
		c.send(cmdSetTensor, a.bytes(), u64(0), b)
	}
	get := func() []int32 {
		out := c.call(cmdGetTensor, r.bytes(), u64(0), u64(16))
		if len(out) != 16 {
			t.Fatalf("get: % x", out)
		}
		v := make([]int32, 4)
		for i := range v {
			v[i] = int32(le.Uint32(out[4*i:]))
		}
		return v
	}
	set(1, -2, 3.0, 40)
	c.send(cmdGraphCompute, encodeGraph(0, []uint64{2}, []wireTensor{a, r}))
	if got := get(); got[0] != 1 || got[1] != -2 || got[2] != 3 || got[3] != 40 {
		t.Fatalf("cast gave %v", got)
	}
	set(5, 6, 7, 8)
	c.send(cmdGraphRecompute, le.AppendUint32(nil, 0))
	if got := get(); got[0] != 5 || got[3] != 8 {
		t.Fatalf("recompute gave %v", got)
	}
}

// MaxConnBytes: allocations beyond a connection's budget fail softly and the connection stays.
func TestMaxConnBytes(t *testing.T) {
	h := newHostileRig(t, func(s *Server) { s.MaxConnBytes = 1024 })
	c := h.raw(true)
	a, _ := c.alloc(512)
	if a == 0 {
		t.Fatal("512 bytes refused")
	}
	if b, _ := c.alloc(1024); b != 0 {
		t.Fatal("allocation over the budget succeeded")
	}
	if c.call(cmdFreeBuffer, u64(a)) == nil {
		t.Fatal("free failed")
	}
	if b, _ := c.alloc(1024); b == 0 {
		t.Fatal("1024 bytes refused after the free")
	}
	if other, _ := h.raw(true).alloc(1024); other == 0 {
		t.Fatal("the budget is per connection")
	}
}

// A view whose view_src names a tensor that none of its sources is, or one not in the list.
func TestHostileViewSource(t *testing.T) {
	h := newHostileRig(t)
	for _, viewSrc := range []uint64{2, 99} {
		c := h.raw(true)
		hd, base := c.alloc(256)
		a := f32Tensor(1, hd, base, 4)
		other := f32Tensor(2, hd, base+64, 4)
		v := f32Tensor(3, hd, base, 2)
		v.Op, v.Src[0], v.ViewSrc, v.Flags = ggmlOpView, 1, viewSrc, flagCompute
		c.send(cmdGraphCompute, encodeGraph(0, []uint64{3}, []wireTensor{a, other, v}))
		c.send(cmdDeviceCount)
		if !c.closed() {
			t.Errorf("view_src %d accepted", viewSrc)
		}
	}
	h.goodRun(h.raw(true))
}

// ggml's clients send a view's strides as ggml computed them, also where they address nothing (an
// empty view, as test-backend-ops' SET_ROWS of zero rows builds, or a dimension of size 1): the
// server compares only the strides that matter.
func TestViewStridesThatAddressNothing(t *testing.T) {
	h := newHostileRig(t)
	for _, ne := range [][4]uint32{{4, 0, 2, 1}, {4, 1, 1, 1}} {
		c := h.raw(true)
		hd, base := c.alloc(256)
		a := f32Tensor(1, hd, base, 4, 4)
		v := f32Tensor(2, hd, base, ne[0], ne[1], ne[2], ne[3])
		v.Nb = [4]uint32{4, 16, 999, 7}
		v.Op, v.Src[0], v.ViewSrc, v.Flags = ggmlOpView, 1, 1, flagCompute
		c.send(cmdGraphCompute, encodeGraph(0, []uint64{2}, []wireTensor{a, v}))
		c.call(cmdDeviceCount)
		if c.closed() {
			t.Errorf("view %v with strides %v refused", ne, v.Nb)
		}
	}
	h.goodRun(h.raw(true))
}
