package rpc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"sync"
	"time"

	"github.com/tandem-ml/tandem/core"
)

// ErrConnectionLost is wrapped by every error of a client whose connection broke (the server closed
// it after rejecting a request, the server died, or a deadline passed). Buffers and handles of that
// connection are gone; Dial again.
var ErrConnectionLost = errors.New("rpc: connection lost")

// Client is one connection to a ggml RPC server. Its devices (one per remote device) share the
// connection; calls are serialized on it, and the server runs them in the order sent.
//
// SET_TENSOR, GRAPH_COMPUTE and GRAPH_RECOMPUTE have no reply in the protocol: they return once
// sent, and the server runs them before anything sent later. A request the server rejects closes
// the connection, so the next call that waits for a reply (reading a result, Sync) fails with an
// error wrapping ErrConnectionLost that names the unconfirmed graph. Sync confirms everything sent
// so far with one round trip.
type Client struct {
	addr string
	// Timeout bounds each call that has no deadline of its own (0: no limit). Set it before use.
	Timeout time.Duration
	// GGMLCompat makes SupportsOp refuse layouts that ggml's CPU backend asserts on (which abort
	// a ggml rpc-server). Set it when the server is llama.cpp's or ggml's; a tandem server runs
	// everything tandem can serialize. The protocol cannot tell the two apart.
	GGMLCompat bool

	mu      sync.Mutex
	nc      net.Conn
	r       *bufio.Reader
	w       *bufio.Writer
	err     error
	patch   byte
	devices []*Device
	// unconfirmed counts the requests without a reply sent since the last reply; lastGraph
	// describes the last graph among them ("GRAPH_COMPUTE on RPC0[host:port]"), for errors.
	unconfirmed int
	lastGraph   string
	sent        [cmdCount]int64 // requests sent, by command (for tests)
}

// Dial connects to a ggml RPC server at "host:port", sends HELLO and checks the version as ggml's
// client does (major 5, minor ≤ 1), then asks for the device count and each device's alignment and
// maximum buffer size. ctx bounds the whole handshake.
func Dial(ctx context.Context, addr string) (*Client, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("tandem: rpc: dial %s: %w", addr, err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	c := &Client{addr: addr, nc: nc, r: bufio.NewReaderSize(nc, 1<<20), w: bufio.NewWriterSize(nc, 1<<20)}
	fail := func(err error) (*Client, error) {
		nc.Close()
		return nil, fmt.Errorf("tandem: rpc: %s: %w", addr, err)
	}
	hello, err := c.call(ctx, cmdHello, helloRespSize, make([]byte, helloReqSize))
	if err != nil {
		return fail(err)
	}
	if hello[0] != ProtoMajor || hello[1] > ProtoMinor {
		return fail(fmt.Errorf("server speaks protocol %d.%d.%d, this client %d.%d.%d", hello[0], hello[1], hello[2],
			ProtoMajor, ProtoMinor, ProtoPatch))
	}
	c.patch = hello[2]
	if hello[2] != ProtoPatch || hello[1] != ProtoMinor {
		slog.Warn("rpc: server protocol version differs; op numbering may differ", "server",
			fmt.Sprintf("%d.%d.%d", hello[0], hello[1], hello[2]), "addr", addr)
	}
	n, err := c.call(ctx, cmdDeviceCount, 4)
	if err != nil {
		return fail(err)
	}
	count := le.Uint32(n)
	if count == 0 || count > 1<<16 {
		return fail(fmt.Errorf("server reports %d devices", count))
	}
	for i := uint32(0); i < count; i++ {
		dev := le.AppendUint32(nil, i)
		a, err := c.call(ctx, cmdGetAlignment, 8, dev)
		if err != nil {
			return fail(err)
		}
		m, err := c.call(ctx, cmdGetMaxSize, 8, dev)
		if err != nil {
			return fail(err)
		}
		align := le.Uint64(a)
		if align == 0 || align&(align-1) != 0 || align > 1<<30 {
			return fail(fmt.Errorf("device %d: alignment %d is not a power of two", i, align))
		}
		maxSize := int64(0)
		if ms := le.Uint64(m); ms < math.MaxInt64 {
			maxSize = int64(ms)
		}
		d := &Device{c: c, index: i, name: fmt.Sprintf("RPC%d[%s]", i, addr)}
		d.bt = &BufferType{d: d, align: int64(align), maxSize: maxSize}
		c.devices = append(c.devices, d)
	}
	return c, nil
}

// Addr is the server address the client was dialed with.
func (c *Client) Addr() string { return c.addr }

// Devices returns one core.Device per remote device, in the server's order.
func (c *Client) Devices() []core.Device {
	out := make([]core.Device, len(c.devices))
	for i, d := range c.devices {
		out[i] = d
	}
	return out
}

// Device returns remote device i, or nil when out of range.
func (c *Client) Device(i int) *Device {
	if i < 0 || i >= len(c.devices) {
		return nil
	}
	return c.devices[i]
}

// Err returns the error that broke the connection, or nil while it is usable.
func (c *Client) Err() error {
	if c.zero() {
		return errZeroClient
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the connection; the server frees every buffer allocated on it.
func (c *Client) Close() error {
	if c.zero() {
		return errZeroClient
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = fmt.Errorf("%w: client closed", ErrConnectionLost)
	}
	return c.nc.Close()
}

// call sends one request and reads its reply of exactly respLen bytes (respLen < 0: the command has
// no reply). Any I/O failure or a reply of the wrong length breaks the connection for good.
func (c *Client) call(ctx context.Context, cmd byte, respLen int, payload ...[]byte) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.callLocked(ctx, cmd, respLen, payload...)
}

func (c *Client) callLocked(ctx context.Context, cmd byte, respLen int, payload ...[]byte) ([]byte, error) {
	if c.zero() {
		return nil, errZeroClient
	}
	if c.err != nil {
		return nil, c.err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dl, ctxDeadline := ctx.Deadline()
	if !ctxDeadline && c.Timeout > 0 {
		dl = time.Now().Add(c.Timeout)
	}
	_ = c.nc.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	out, err := c.exchange(cmd, respLen, payload)
	if err != nil {
		var ne net.Error
		switch {
		case ctx.Err() != nil:
			err = fmt.Errorf("%w (%w)", err, ctx.Err())
		case ctxDeadline && errors.As(err, &ne) && ne.Timeout():
			err = fmt.Errorf("%w (%w)", err, context.DeadlineExceeded)
		}
		after := ""
		if c.unconfirmed > 0 {
			after = fmt.Sprintf(" (unconfirmed: %d request(s) without reply", c.unconfirmed)
			if c.lastGraph != "" {
				after += ", the last graph " + c.lastGraph
			}
			after += "; a server closes the connection on a request it rejects)"
		}
		c.err = fmt.Errorf("%w: %s to %s%s: %w", ErrConnectionLost, cmdName(cmd), c.addr, after, err)
		c.nc.Close()
		return nil, c.err
	}
	c.sent[cmd]++
	if respLen < 0 {
		c.unconfirmed++
	} else {
		c.unconfirmed, c.lastGraph = 0, ""
	}
	return out, nil
}

func (c *Client) exchange(cmd byte, respLen int, payload [][]byte) ([]byte, error) {
	var n uint64
	for _, p := range payload {
		n += uint64(len(p))
	}
	var hdr [9]byte
	hdr[0] = cmd
	le.PutUint64(hdr[1:], n)
	if _, err := c.w.Write(hdr[:]); err != nil {
		return nil, err
	}
	for _, p := range payload {
		if _, err := c.w.Write(p); err != nil {
			return nil, err
		}
	}
	if err := c.w.Flush(); err != nil {
		return nil, err
	}
	if respLen < 0 {
		return nil, nil // SET_TENSOR, GRAPH_COMPUTE, GRAPH_RECOMPUTE: no reply
	}
	var lb [8]byte
	if _, err := readFull(c.r, lb[:]); err != nil {
		return nil, err
	}
	if got := le.Uint64(lb[:]); got != uint64(respLen) {
		return nil, fmt.Errorf("reply of %d bytes, want %d", got, respLen)
	}
	out := make([]byte, respLen)
	if _, err := readFull(c.r, out); err != nil {
		return nil, err
	}
	return out, nil
}

func readFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := r.Read(b[n:])
		n += k
		if err != nil {
			if n == len(b) {
				return n, nil
			}
			return n, err
		}
	}
	return n, nil
}

// Sync makes one round trip (DEVICE_COUNT) so that every request sent before it, uploads and
// graphs included, is known to have been accepted and run by the server. A graph the server
// rejected, a dropped connection or a hung server (once ctx is done, or after Timeout) is an error
// wrapping ErrConnectionLost. Nothing else needs Sync: results read later are the graphs' results.
// A nil ctx means context.Background().
func (c *Client) Sync(ctx context.Context) error {
	if c.zero() {
		return errZeroClient
	}
	if _, err := c.call(ctx, cmdDeviceCount, 4); err != nil {
		return fmt.Errorf("tandem: rpc: sync: %w", err)
	}
	return nil
}
