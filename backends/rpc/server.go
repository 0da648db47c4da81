package rpc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/bits"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/tandem-ml/tandem/core"
)

// Server exposes tandem backends over ggml's RPC protocol. Every connection has its own buffers,
// freed when it closes; a malformed request closes only its connection, with the reason logged.
type Server struct {
	// Backends are the devices offered, in order (device 0 is Backends[0]).
	Backends []core.Backend
	// Logger receives connection events and rejected requests; nil means slog.Default().
	Logger *slog.Logger
	// MaxPayload bounds SET_TENSOR and GRAPH_COMPUTE payloads; 0 means 4 GiB.
	MaxPayload uint64
	// CacheDir, when set, keeps uploads over 10 MiB by FNV-1a hash for SET_TENSOR_HASH.
	CacheDir string
	// MaxConnBytes bounds the buffer memory one connection may hold; 0 means no limit. Requests
	// beyond it get the protocol's soft failure (handle 0), as an allocation that fails.
	MaxConnBytes uint64

	lockOnce sync.Once
	devLock  []int        // device → index of its lock in locks (devices of one backend share it)
	locks    []sync.Mutex // held while a request touches that device's backend or buffers
	panicked atomic.Int64 // internal errors caught (a bug; tests check it stays 0)
	served   [cmdCount]atomic.Int64
}

// lockDevices locks the backends of devices ds (one lock per backend: requests on different
// devices run in parallel, those on one backend one at a time, as backends need not be safe for
// concurrent use) and returns the function that unlocks them. Locks are taken in ascending order,
// so a request that needs two devices (a copy, a graph over buffers of another device) cannot
// deadlock with another.
func (s *Server) lockDevices(ds ...int) (unlock func()) {
	s.lockOnce.Do(func() {
		s.devLock = make([]int, len(s.Backends))
		s.locks = make([]sync.Mutex, len(s.Backends))
		for i, b := range s.Backends {
			s.devLock[i] = i
			for j := range i {
				if sameBackend(s.Backends[j], b) {
					s.devLock[i] = s.devLock[j]
					break
				}
			}
		}
	})
	idx := make([]int, 0, len(ds))
	for _, d := range ds {
		if d >= 0 && d < len(s.devLock) {
			idx = append(idx, s.devLock[d])
		}
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	for _, i := range idx {
		s.locks[i].Lock()
	}
	return func() {
		for k := len(idx) - 1; k >= 0; k-- {
			s.locks[idx[k]].Unlock()
		}
	}
}

// sameBackend reports whether a and b are the same backend value (a backend listed twice). Only
// pointers are compared: comparing other dynamic types could panic.
func sameBackend(a, b core.Backend) bool {
	ta := reflect.TypeOf(a)
	return ta != nil && ta == reflect.TypeOf(b) && ta.Kind() == reflect.Pointer && a == b
}

// Serve accepts ggml RPC clients on l until ctx is done or l fails, serving each connection in its
// own goroutine, and exposes backends as devices 0..len(backends)-1. It closes l and every open
// connection before it returns.
func Serve(ctx context.Context, l net.Listener, backends ...core.Backend) error {
	s := &Server{Backends: backends}
	return s.Serve(ctx, l)
}

// Serve is the method form of the package-level Serve.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	if len(s.Backends) == 0 {
		return errors.New("tandem: rpc: Serve needs at least one backend")
	}
	for i, b := range s.Backends {
		if b == nil {
			return fmt.Errorf("tandem: rpc: backend %d is nil", i)
		}
	}
	log := s.Logger
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	open := map[net.Conn]struct{}{}
	stop := context.AfterFunc(ctx, func() {
		l.Close()
		mu.Lock()
		for c := range open {
			c.Close()
		}
		mu.Unlock()
	})
	defer stop()
	var err error
	for {
		nc, aerr := l.Accept()
		if aerr != nil {
			if ctx.Err() == nil {
				err = fmt.Errorf("tandem: rpc: accept: %w", aerr)
			}
			break
		}
		if tc, ok := nc.(*net.TCPConn); ok {
			_ = tc.SetNoDelay(true)
		}
		mu.Lock()
		open[nc] = struct{}{}
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &conn{s: s, nc: nc, log: log.With("peer", nc.RemoteAddr().String()),
				bufs: map[uint64]*sbuf{}, nextBase: 1 << 20, last: map[uint32]*storedGraph{}}
			c.serve()
			mu.Lock()
			delete(open, nc)
			mu.Unlock()
		}()
	}
	cancel()
	l.Close()
	mu.Lock()
	for c := range open {
		c.Close()
	}
	mu.Unlock()
	wg.Wait()
	return err
}

// sbuf is a buffer handed out on one connection. Its base is a virtual address (no heap address
// leaks); data addresses in requests are mapped back through it.
type sbuf struct {
	handle, base, size uint64
	dev                int
	buf                core.Buffer // nil for a zero-size buffer
}

// storedGraph is the last graph computed on a device: the segments buildGraph made, in order.
type storedGraph struct {
	gs   []*core.Graph
	bufs []*sbuf
}

type conn struct {
	s          *Server
	nc         net.Conn
	log        *slog.Logger
	r          *bufio.Reader
	w          *bufio.Writer
	bufs       map[uint64]*sbuf
	nextHandle uint64
	nextBase   uint64
	last       map[uint32]*storedGraph
	hello      bool
	held       uint64   // bytes of live buffers
	pending    [][]byte // reply parts, written once the request is done
}

func (c *conn) serve() {
	c.r = bufio.NewReaderSize(c.nc, 64<<10)
	c.w = bufio.NewWriterSize(c.nc, 64<<10)
	c.log.Info("rpc: connection opened")
	defer func() {
		if p := recover(); p != nil {
			c.s.panicked.Add(1)
			c.log.Error("rpc: closing connection after internal error", "panic", fmt.Sprint(p))
		}
		c.nc.Close()
		for h, b := range c.bufs {
			if b.buf != nil {
				unlock := c.s.lockDevices(b.dev)
				_ = b.buf.Free()
				unlock()
			}
			delete(c.bufs, h)
		}
		c.last = nil
		c.log.Info("rpc: connection closed")
	}()
	maxp := c.s.MaxPayload
	if maxp == 0 {
		maxp = defaultMaxPayload
	}
	for {
		req, err := readRequest(c.r, maxp)
		if err != nil {
			if !errors.Is(err, net.ErrClosed) && err.Error() != "EOF" {
				c.log.Warn("rpc: closing connection", "reason", err.Error())
			}
			return
		}
		c.s.served[req.Cmd].Add(1)
		// Each request holds the locks of the devices it touches while it runs (see
		// lockDevices); replies are written after they are released, so a client that does not
		// read cannot hold up the others.
		if err := c.handle(req); err != nil {
			c.log.Warn("rpc: closing connection", "command", cmdName(req.Cmd), "reason", err.Error())
			return
		}
		for _, p := range c.pending {
			if _, err := c.w.Write(p); err != nil {
				return
			}
		}
		c.pending = c.pending[:0]
		if hasReply(req.Cmd) {
			if err := c.w.Flush(); err != nil {
				return
			}
		}
	}
}

func (c *conn) reply(p ...[]byte) error {
	var n uint64
	for _, b := range p {
		n += uint64(len(b))
	}
	c.pending = append(c.pending, le.AppendUint64(nil, n))
	c.pending = append(c.pending, p...)
	return nil
}

func u64(v uint64) []byte { return le.AppendUint64(nil, v) }

func (c *conn) device(p []byte) (int, core.Backend, error) {
	d := le.Uint32(p)
	if uint64(d) >= uint64(len(c.s.Backends)) {
		return 0, nil, fmt.Errorf("device %d out of range (%d devices)", d, len(c.s.Backends))
	}
	return int(d), c.s.Backends[d], nil
}

func (c *conn) buffer(h uint64) (*sbuf, error) {
	b, ok := c.bufs[h]
	if !ok || h == 0 {
		return nil, fmt.Errorf("buffer %#x was not handed out on this connection", h)
	}
	return b, nil
}

func (c *conn) handle(req request) error {
	p := req.Payload
	if !c.hello {
		if req.Cmd != cmdHello {
			return fmt.Errorf("first command is %s, want HELLO", cmdName(req.Cmd))
		}
		c.hello = true
		resp := make([]byte, helloRespSize)
		resp[0], resp[1], resp[2] = ProtoMajor, ProtoMinor, ProtoPatch
		return c.reply(resp) // caps stay zero: TCP only
	}
	switch req.Cmd {
	case cmdHello:
		return errors.New("second HELLO")
	case cmdDeviceCount:
		return c.reply(le.AppendUint32(nil, uint32(len(c.s.Backends))))
	case cmdGetAlignment, cmdGetMaxSize:
		d, be, err := c.device(p)
		if err != nil {
			return err
		}
		defer c.s.lockDevices(d)()
		bt := be.DefaultBufferType()
		v := uint64(bt.Alignment())
		if req.Cmd == cmdGetMaxSize {
			v = uint64(bt.MaxSize())
			if bt.MaxSize() <= 0 {
				v = math.MaxUint64
			}
		}
		return c.reply(u64(v))
	case cmdGetDeviceMem:
		d, be, err := c.device(p)
		if err != nil {
			return err
		}
		defer c.s.lockDevices(d)()
		free, total := be.Device().Memory()
		return c.reply(u64(uint64(max(free, 0))), u64(uint64(max(total, 0))))
	case cmdAllocBuffer:
		return c.alloc(p)
	case cmdBufferGetBase:
		b, err := c.buffer(le.Uint64(p))
		if err != nil {
			return err
		}
		return c.reply(u64(b.base))
	case cmdFreeBuffer:
		b, err := c.buffer(le.Uint64(p))
		if err != nil {
			return err
		}
		delete(c.bufs, b.handle)
		c.held -= b.size
		if b.buf != nil {
			defer c.s.lockDevices(b.dev)()
			if err := b.buf.Free(); err != nil {
				return fmt.Errorf("free: %w", err)
			}
		}
		return c.reply()
	case cmdBufferClear:
		b, err := c.buffer(le.Uint64(p))
		if err != nil {
			return err
		}
		if b.buf != nil {
			defer c.s.lockDevices(b.dev)()
			if err := b.buf.Clear(p[8]); err != nil {
				return fmt.Errorf("clear: %w", err)
			}
		}
		return c.reply()
	case cmdSetTensor:
		return c.setTensor(p)
	case cmdSetTensorHash:
		return c.setTensorHash(p)
	case cmdGetTensor:
		return c.getTensor(p)
	case cmdMemsetTensor:
		return c.memsetTensor(p)
	case cmdCopyTensor:
		return c.copyTensor(p)
	case cmdInitTensor:
		w := getTensor(p)
		if w.Buffer != 0 {
			if _, ok := c.bufs[w.Buffer]; ok {
				if _, _, err := c.tensor(&w); err != nil {
					return err
				}
			}
		}
		return c.reply()
	case cmdGetAllocSize:
		d, be, err := c.device(p)
		if err != nil {
			return err
		}
		w := getTensor(p[4:])
		t, sb, err := c.shapeOnly(&w)
		if err != nil {
			return err
		}
		bt, dev := be.DefaultBufferType(), d
		if sb != nil && sb.buf != nil {
			bt, dev = sb.buf.Type(), sb.dev
		}
		defer c.s.lockDevices(dev)()
		return c.reply(u64(uint64(max(bt.AllocSize(t), 0))))
	case cmdGraphCompute:
		return c.graphCompute(p)
	case cmdGraphRecompute:
		return c.graphRecompute(p)
	}
	return fmt.Errorf("unknown command %d", req.Cmd)
}

func (c *conn) alloc(p []byte) error {
	d, be, err := c.device(p)
	if err != nil {
		return err
	}
	size := le.Uint64(p[4:])
	fail := func(why error) error {
		c.log.Info("rpc: allocation failed", "device", d, "size", size, "reason", why)
		return c.reply(u64(0), u64(0))
	}
	bt := be.DefaultBufferType()
	align := uint64(max(bt.Alignment(), 4096))
	if size > math.MaxInt64/2 || size > math.MaxUint64/4-c.nextBase {
		return fail(errors.New("size too large"))
	}
	if lim := c.s.MaxConnBytes; lim > 0 && (size > lim || c.held > lim-size) {
		return fail(fmt.Errorf("connection holds %d bytes, limit %d", c.held, lim))
	}
	var buf core.Buffer
	got := uint64(0)
	if size > 0 {
		unlock := c.s.lockDevices(d)
		buf, err = bt.Alloc(int64(size))
		unlock()
		if err != nil {
			return fail(err)
		}
		got = uint64(buf.Size())
	}
	base := uint64(0)
	if got > 0 {
		base = (c.nextBase + align - 1) / align * align
		if base > 1<<62 || got > 1<<62-base {
			_ = buf.Free()
			return fail(errors.New("connection address space exhausted"))
		}
		c.nextBase = base + got + align
	}
	c.nextHandle++
	h := c.nextHandle<<8 | 0x5a // non-zero, not an address
	c.bufs[h] = &sbuf{handle: h, base: base, size: got, dev: d, buf: buf}
	c.held += got
	return c.reply(u64(h), u64(got))
}

// extent is ggml's nbytes computed without wrapping; ok is false if it overflows or the type has
// no layout.
func extent(typ core.Type, ne, nb [4]uint32) (uint64, bool) {
	for _, n := range ne {
		if n == 0 {
			return 0, true
		}
	}
	bs, ts := typ.BlockSize(), typ.Size()
	if bs <= 0 || ts <= 0 {
		return 0, false
	}
	var n uint64
	if bs == 1 {
		n = uint64(ts)
		for i := 0; i < 4; i++ {
			var carry uint64
			n, carry = bits.Add64(n, uint64(ne[i]-1)*uint64(nb[i]), 0)
			if carry != 0 || n >= 1<<62 {
				return 0, false
			}
		}
	} else {
		n = uint64(ne[0]) * uint64(nb[0]) / uint64(bs)
		for i := 1; i < 4; i++ {
			var carry uint64
			n, carry = bits.Add64(n, uint64(ne[i]-1)*uint64(nb[i]), 0)
			if carry != 0 || n >= 1<<62 {
				return 0, false
			}
		}
	}
	if n >= 1<<62 {
		return 0, false
	}
	return n, true
}

// shapeOnly turns a wire tensor into a tensor without memory (type, ne, nb checked); the buffer, if
// named, must be one of this connection's.
func (c *conn) shapeOnly(w *wireTensor) (*core.Tensor, *sbuf, error) {
	typ := core.Type(w.Type)
	if w.Type > math.MaxInt32 || !typ.Valid() || typ.BlockSize() <= 0 {
		return nil, nil, fmt.Errorf("tensor %q: unknown type %d", w.name(), w.Type)
	}
	if _, ok := extent(typ, w.Ne, w.Nb); !ok {
		return nil, nil, fmt.Errorf("tensor %q: extent of ne %v nb %v overflows", w.name(), w.Ne, w.Nb)
	}
	t := &core.Tensor{Type: typ, Name: w.name()}
	for i := 0; i < 4; i++ {
		t.Ne[i], t.Nb[i] = int64(w.Ne[i]), int64(w.Nb[i])
	}
	var sb *sbuf
	if w.Buffer != 0 {
		b, err := c.buffer(w.Buffer)
		if err != nil {
			return nil, nil, fmt.Errorf("tensor %q: %w", w.name(), err)
		}
		sb = b
	}
	return t, sb, nil
}

// tensor checks a wire tensor against its buffer: the buffer is this connection's, and
// [data, data+nbytes) lies inside it. The result has Buffer and Offset set.
func (c *conn) tensor(w *wireTensor) (*core.Tensor, *sbuf, error) {
	t, sb, err := c.shapeOnly(w)
	if err != nil {
		return nil, nil, err
	}
	if sb == nil {
		return nil, nil, fmt.Errorf("tensor %q has no buffer", w.name())
	}
	n, ok := extent(t.Type, w.Ne, w.Nb)
	if !ok || uint64(t.NBytes()) > n {
		return nil, nil, fmt.Errorf("tensor %q: shape %v with strides %v spans more bytes than any buffer holds", w.name(), w.Ne, w.Nb)
	}
	if w.Data < sb.base || w.Data-sb.base > sb.size || n > sb.size-(w.Data-sb.base) {
		return nil, nil, fmt.Errorf("tensor %q: bytes [%#x, +%d) are outside buffer %#x [%#x, +%d)",
			w.name(), w.Data, n, sb.handle, sb.base, sb.size)
	}
	if sb.buf == nil {
		if n > 0 {
			return nil, nil, fmt.Errorf("tensor %q lies in an empty buffer", w.name())
		}
		return t, sb, nil
	}
	t.Buffer, t.Offset = sb.buf, int64(w.Data-sb.base)
	return t, sb, nil
}

// region checks that [offset, offset+size) lies inside tensor t.
func region(t *core.Tensor, offset, size uint64) error {
	n := uint64(t.NBytes())
	if offset > n || size > n-offset {
		return fmt.Errorf("tensor %q: bytes [%d, +%d) are outside its %d bytes", t.Name, offset, size, n)
	}
	return nil
}

func (c *conn) setTensor(p []byte) error {
	if len(p) < setHeaderSize {
		return fmt.Errorf("%w: %d bytes, want at least %d", errShort, len(p), setHeaderSize)
	}
	w := getTensor(p)
	t, sb, err := c.tensor(&w)
	if err != nil {
		return err
	}
	off, data := le.Uint64(p[tensorSize:]), p[setHeaderSize:]
	if err := region(t, off, uint64(len(data))); err != nil {
		return err
	}
	if len(data) == 0 {
		return nil
	}
	unlock := c.s.lockDevices(sb.dev)
	err = t.Buffer.SetTensor(t, data, int64(off))
	unlock()
	if err != nil {
		return fmt.Errorf("set: %w", err)
	}
	if c.s.CacheDir != "" && len(data) > hashMinBytes {
		name := filepath.Join(c.s.CacheDir, fmt.Sprintf("%016x", fnv1a64(data)))
		if err := os.WriteFile(name, data, 0o644); err != nil {
			c.log.Warn("rpc: cache write failed", "file", name, "err", err)
		}
	}
	return nil
}

func (c *conn) setTensorHash(p []byte) error {
	if c.s.CacheDir == "" {
		return c.reply([]byte{0})
	}
	name := filepath.Join(c.s.CacheDir, fmt.Sprintf("%016x", le.Uint64(p[tensorSize+8:])))
	data, err := os.ReadFile(name)
	if err != nil {
		return c.reply([]byte{0})
	}
	w := getTensor(p)
	t, sb, err := c.tensor(&w)
	if err != nil {
		return err
	}
	off := le.Uint64(p[tensorSize:])
	if err := region(t, off, uint64(len(data))); err != nil {
		return err
	}
	if len(data) > 0 {
		defer c.s.lockDevices(sb.dev)()
		if err := t.Buffer.SetTensor(t, data, int64(off)); err != nil {
			return fmt.Errorf("set: %w", err)
		}
	}
	return c.reply([]byte{1})
}

func (c *conn) getTensor(p []byte) error {
	w := getTensor(p)
	t, sb, err := c.tensor(&w)
	if err != nil {
		return err
	}
	off, size := le.Uint64(p[tensorSize:]), le.Uint64(p[tensorSize+8:])
	if err := region(t, off, size); err != nil {
		return err
	}
	out := make([]byte, size)
	if size > 0 {
		defer c.s.lockDevices(sb.dev)()
		if err := t.Buffer.GetTensor(t, out, int64(off)); err != nil {
			return fmt.Errorf("get: %w", err)
		}
	}
	return c.reply(out)
}

func (c *conn) memsetTensor(p []byte) error {
	w := getTensor(p)
	t, sb, err := c.tensor(&w)
	if err != nil {
		return err
	}
	off, size := le.Uint64(p[tensorSize:]), le.Uint64(p[tensorSize+8:])
	if err := region(t, off, size); err != nil {
		return err
	}
	if size > 0 {
		defer c.s.lockDevices(sb.dev)()
		if err := t.Buffer.MemsetTensor(t, p[tensorSize+16], int64(off), int64(size)); err != nil {
			return fmt.Errorf("memset: %w", err)
		}
	}
	return c.reply()
}

func (c *conn) copyTensor(p []byte) error {
	ws, wd := getTensor(p), getTensor(p[tensorSize:])
	src, sb, err := c.tensor(&ws)
	if err != nil {
		return err
	}
	dst, db, err := c.tensor(&wd)
	if err != nil {
		return err
	}
	n := uint64(src.NBytes())
	if n > db.size-(wd.Data-db.base) {
		return fmt.Errorf("copy of %d bytes does not fit after %q in buffer %#x", n, wd.name(), db.handle)
	}
	if n == 0 {
		return c.reply([]byte{1})
	}
	defer c.s.lockDevices(sb.dev, db.dev)()
	tmp := make([]byte, n)
	if err := src.Buffer.GetTensor(src, tmp, 0); err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	raw := &core.Tensor{Type: core.TypeI8, Ne: [4]int64{int64(n), 1, 1, 1}, Nb: [4]int64{1, int64(n), int64(n), int64(n)},
		Buffer: dst.Buffer, Offset: dst.Offset}
	if err := dst.Buffer.SetTensor(raw, tmp, 0); err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	return c.reply([]byte{1})
}
