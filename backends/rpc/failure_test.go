package rpc_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/rpc"
	"github.com/tandem-ml/tandem/core"
)

// freezer is a loopback proxy that can stop forwarding (a hung server) or drop both sides.
type freezer struct {
	l      net.Listener
	mu     sync.Mutex
	frozen bool
	conns  []net.Conn
}

func newFreezer(t *testing.T, target string) *freezer {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{l: l}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				return
			}
			f.mu.Lock()
			f.conns = append(f.conns, c, s)
			f.mu.Unlock()
			go f.pipe(s, c)
			go f.pipe(c, s)
		}
	}()
	t.Cleanup(func() { l.Close(); f.drop() })
	return f
}

func (f *freezer) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		for {
			f.mu.Lock()
			frozen := f.frozen
			f.mu.Unlock()
			if !frozen {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err == io.EOF {
				dst.(*net.TCPConn).CloseWrite()
			}
			return
		}
	}
}

func (f *freezer) freeze() { f.mu.Lock(); f.frozen = true; f.mu.Unlock() }

func (f *freezer) drop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		c.Close()
	}
}

type remoteAdd struct {
	be      core.Backend
	g       *core.Graph
	a, out  *core.Tensor
	wbuf    core.Buffer
	cbuf    core.Buffer
	backend *rpc.Backend
}

func setupRemoteAdd(t *testing.T, c *rpc.Client) *remoteAdd {
	be, err := c.Devices()[0].NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor1D(core.TypeF32, 256)
	out := ctx.Add(ctx.Sqr(a), a)
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	buf, err := alloc.AllocCtxTensors(ctx, be)
	if err != nil {
		t.Fatal(err)
	}
	g := core.NewGraph(16)
	g.BuildForwardExpand(out)
	v := make([]float32, 256)
	for i := range v {
		v[i] = float32(i)
	}
	if err := core.SetFloat32s(a, v); err != nil {
		t.Fatal(err)
	}
	return &remoteAdd{be: be, g: g, a: a, out: out, cbuf: buf, backend: be.(*rpc.Backend)}
}

// A hung server: GraphComputeContext returns once the graph is sent (no reply, no round trip), and
// the next call that waits for one (Sync, GetTensorContext) returns an error naming the graph at
// its context's deadline instead of hanging; the client is unusable afterwards.
func TestHungServerDeadline(t *testing.T) {
	for _, wait := range []string{"Sync", "GetTensorContext"} {
		t.Run(wait, func(t *testing.T) {
			addr, _ := startServer(t, 1)
			f := newFreezer(t, addr)
			c := dial(t, f.l.Addr().String())
			r := setupRemoteAdd(t, c)
			if err := r.backend.GraphComputeContext(context.Background(), r.g); err != nil {
				t.Fatal(err)
			}
			got, err := core.GetFloat32s(r.out)
			if err != nil || got[3] != 12 {
				t.Fatalf("before freezing: %v %v", got[:4], err)
			}
			f.freeze()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			if err := r.backend.GraphComputeContext(ctx, r.g); err != nil {
				t.Fatalf("sending a graph to a hung server: %v", err)
			}
			if wait == "Sync" {
				err = c.Sync(ctx)
			} else {
				err = r.out.Buffer.(*rpc.Buffer).GetTensorContext(ctx, r.out, make([]byte, 16), 0)
			}
			if err == nil || !errors.Is(err, rpc.ErrConnectionLost) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("hung server: err %v, want connection lost with deadline exceeded", err)
			}
			if !strings.Contains(err.Error(), "GRAPH_RECOMPUTE on "+r.backend.Name()) {
				t.Errorf("error %q does not name the unconfirmed graph", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("error after %v", d)
			}
			if err := core.TensorGet(r.out, make([]byte, 16), 0); !errors.Is(err, rpc.ErrConnectionLost) {
				t.Fatalf("TensorGet after loss: %v", err)
			}
			if err := r.be.Synchronize(); !errors.Is(err, rpc.ErrConnectionLost) {
				t.Fatalf("Synchronize after loss: %v", err)
			}
		})
	}
}

// A dropped connection (server gone): TensorGet fails at once, bounded by the client's Timeout.
func TestDroppedConnection(t *testing.T) {
	addr, _ := startServer(t, 1)
	f := newFreezer(t, addr)
	c := dial(t, f.l.Addr().String())
	c.Timeout = 2 * time.Second
	r := setupRemoteAdd(t, c)
	if err := r.be.GraphCompute(r.g); err != nil {
		t.Fatal(err)
	}
	f.drop()
	start := time.Now()
	err := core.TensorGet(r.out, make([]byte, 16), 0)
	if !errors.Is(err, rpc.ErrConnectionLost) {
		t.Fatalf("TensorGet after drop: %v", err)
	}
	if err := r.be.GraphCompute(r.g); !errors.Is(err, rpc.ErrConnectionLost) {
		t.Fatalf("GraphCompute after drop: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("errors after %v", d)
	}
	if c.Err() == nil {
		t.Fatal("client does not report its lost connection")
	}
}

// Several clients at once on one server, each with its own buffers.
func TestConcurrentClients(t *testing.T) {
	addr, _ := startServer(t, 2)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for k := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := rpc.Dial(ctx, addr)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			if len(c.Devices()) != 2 {
				errs <- errors.New("want 2 devices")
				return
			}
			be, _ := c.Devices()[k%2].NewBackend()
			cctx := core.NewContext(core.ContextParams{NoAlloc: true})
			a := cctx.NewTensor1D(core.TypeF32, 64)
			out := cctx.Scale(a, float32(k+1))
			buf, err := alloc.AllocCtxTensors(cctx, be)
			if err != nil {
				errs <- err
				return
			}
			defer buf.Free()
			g := core.NewGraph(8)
			g.BuildForwardExpand(out)
			for run := range 20 {
				v := make([]float32, 64)
				for i := range v {
					v[i] = float32(i + run)
				}
				if err := core.SetFloat32s(a, v); err != nil {
					errs <- err
					return
				}
				if err := be.GraphCompute(g); err != nil {
					errs <- err
					return
				}
				got, err := core.GetFloat32s(out)
				if err != nil {
					errs <- err
					return
				}
				if got[5] != float32((5+run)*(k+1)) {
					errs <- errors.New("wrong value")
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
