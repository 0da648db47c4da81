package rpc

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// fakeHello answers HELLO with the given version, then DEVICE_COUNT 1, GET_ALIGNMENT 32 and
// GET_MAX_SIZE 2^64-1, as a CPU server does.
func fakeHello(t *testing.T, major, minor, patch byte) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		for {
			req, err := readRequest(nc, 1<<20)
			if err != nil {
				return
			}
			var p []byte
			switch req.Cmd {
			case cmdHello:
				p = make([]byte, helloRespSize)
				p[0], p[1], p[2] = major, minor, patch
			case cmdDeviceCount:
				p = le.AppendUint32(nil, 1)
			case cmdGetAlignment:
				p = u64(32)
			case cmdGetMaxSize:
				p = u64(^uint64(0))
			default:
				return
			}
			if _, err := nc.Write(append(u64(uint64(len(p))), p...)); err != nil {
				return
			}
		}
	}()
	return l.Addr().String()
}

// The client accepts a server whose major is 5 and whose minor is at most 1 (patch ignored), as
// ggml's client does, and refuses the others.
func TestVersionCheck(t *testing.T) {
	for _, c := range []struct {
		v  [3]byte
		ok bool
	}{{[3]byte{5, 1, 0}, true}, {[3]byte{5, 0, 0}, true}, {[3]byte{5, 1, 7}, true},
		{[3]byte{5, 2, 0}, false}, {[3]byte{4, 0, 3}, false}, {[3]byte{6, 0, 0}, false}} {
		addr := fakeHello(t, c.v[0], c.v[1], c.v[2])
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cl, err := Dial(ctx, addr)
		cancel()
		if (err == nil) != c.ok {
			t.Errorf("server %d.%d.%d: err %v, want accepted=%v", c.v[0], c.v[1], c.v[2], err, c.ok)
		}
		if err == nil {
			if n := len(cl.Devices()); n != 1 || cl.Device(0).BufferType().Alignment() != 32 || cl.Device(0).BufferType().MaxSize() != 0 {
				t.Errorf("devices %d, alignment %d, max size %d", n, cl.Device(0).BufferType().Alignment(), cl.Device(0).BufferType().MaxSize())
			}
			cl.Close()
		}
	}
}

// The client's first bytes are exactly the HELLO frame of the notes.
func TestClientSendsHelloFirst(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan []byte, 1)
	go func() {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		b := make([]byte, 33)
		io.ReadFull(nc, b)
		got <- b
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, _ = Dial(ctx, l.Addr().String())
	b := <-got
	want := appendFrame(nil, cmdHello, make([]byte, 24))
	if string(b) != string(want) {
		t.Errorf("first bytes % x, want % x", b, want)
	}
}
