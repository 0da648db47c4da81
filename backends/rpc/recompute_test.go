package rpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// serveTest serves s on an ephemeral loopback port until the test ends and returns a client
// dialed to it.
func serveTest(t *testing.T, s *Server) *Client {
	t.Helper()
	return dialTest(t, listenTest(t, s))
}

// listenTest serves s on an ephemeral loopback port until the test ends.
func listenTest(t *testing.T, s *Server) string {
	t.Helper()
	if s.Logger == nil {
		s.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("server did not stop")
		}
	})
	return l.Addr().String()
}

// dialTest dials addr; the client is closed when the test ends.
func dialTest(t *testing.T, addr string) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Timeout = 20 * time.Second
	t.Cleanup(func() { c.Close() })
	return c
}

func cpuBackends(t *testing.T, n int) []core.Backend {
	t.Helper()
	var bes []core.Backend
	for range n {
		be, err := cpu.New(cpu.Options{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { be.Close() })
		bes = append(bes, be)
	}
	return bes
}

// served returns the server's request counts by command name.
func (s *Server) servedCounts() map[string]int64 {
	m := map[string]int64{}
	for cmd := range s.served {
		if n := s.served[cmd].Load(); n > 0 {
			m[cmdName(byte(cmd))] = n
		}
	}
	return m
}

// countsSince is after minus before, only the commands that changed.
func countsSince(before, after map[string]int64) map[string]int64 {
	d := map[string]int64{}
	for k, v := range after {
		if v != before[k] {
			d[k] = v - before[k]
		}
	}
	return d
}

// addGraph is out = a² + a on one remote device, with a spare tensor of out's shape to move out to.
type addGraph struct {
	be         *Backend
	a, out, sp *core.Tensor
	g          *core.Graph
	buf        core.Buffer
}

func newAddGraph(t *testing.T, c *Client, dev int) *addGraph {
	t.Helper()
	be, err := c.Device(dev).NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor1D(core.TypeF32, 64)
	out := ctx.Add(ctx.Sqr(a), a)
	sp := ctx.NewTensor1D(core.TypeF32, 64)
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	buf, err := alloc.AllocCtxTensors(ctx, be)
	if err != nil {
		t.Fatal(err)
	}
	g := core.NewGraph(16)
	g.BuildForwardExpand(out)
	return &addGraph{be: be.(*Backend), a: a, out: out, sp: sp, g: g, buf: buf}
}

// run uploads a = i+k, computes and checks out = a² + a.
func (ag *addGraph) run(t *testing.T, k float32) {
	t.Helper()
	if err := ag.try(k); err != nil {
		t.Fatal(err)
	}
}

func (ag *addGraph) try(k float32) error {
	v := make([]float32, 64)
	for i := range v {
		v[i] = float32(i) + k
	}
	if err := core.SetFloat32s(ag.a, v); err != nil {
		return err
	}
	if err := ag.be.GraphCompute(ag.g); err != nil {
		return err
	}
	got, err := core.GetFloat32s(ag.out)
	if err != nil {
		return err
	}
	for i, x := range v {
		if got[i] != x*x+x {
			return fmt.Errorf("a=%v: out[%d] = %v, want %v", x, i, got[i], x*x+x)
		}
	}
	return nil
}

// An unchanged graph is sent once (GRAPH_COMPUTE), then run again with GRAPH_RECOMPUTE, and no
// compute costs a DEVICE_COUNT round trip; a changed graph (another graph, a moved tensor, a freed
// buffer, another device in between) is sent again, and the results stay right throughout.
func TestGraphRecompute(t *testing.T) {
	s := &Server{Backends: cpuBackends(t, 2)}
	c := serveTest(t, s)
	ag := newAddGraph(t, c, 0)
	step := func(name string, k float32, want map[string]int64, do func()) {
		t.Helper()
		before := s.servedCounts()
		if do != nil {
			do()
		}
		ag.run(t, k)
		got := countsSince(before, s.servedCounts())
		if len(got) != len(want) {
			t.Errorf("%s: requests %v, want %v", name, got, want)
			return
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: requests %v, want %v", name, got, want)
				return
			}
		}
	}
	compute := map[string]int64{"SET_TENSOR": 1, "GRAPH_COMPUTE": 1, "GET_TENSOR": 1}
	recompute := map[string]int64{"SET_TENSOR": 1, "GRAPH_RECOMPUTE": 1, "GET_TENSOR": 1}
	step("first compute", 0, compute, nil)
	step("same graph", 1, recompute, nil)
	step("same graph again", 2, recompute, nil)
	// The same graph built anew serializes to the same bytes.
	step("rebuilt graph", 3, recompute, func() {
		g := core.NewGraph(16)
		g.BuildForwardExpand(ag.out)
		ag.g = g
	})

	// The output moves to the spare tensor's memory: the addresses differ, the graph is resent.
	step("moved output", 4, compute, func() { ag.out.Offset, ag.sp.Offset = ag.sp.Offset, ag.out.Offset })
	step("moved output, again", 5, recompute, nil)

	// A different graph on the device replaces the stored one; going back resends the first.
	other := newAddGraph(t, c, 0)
	step("other graph", 6, compute, func() { ag, other = other, ag })
	ag, other = other, ag
	step("first graph after another", 8, compute, nil)

	// A graph on device 1 does not replace device 0's.
	dev1 := newAddGraph(t, c, 1)
	dev1.run(t, 9)
	before := s.servedCounts()
	dev1.run(t, 10)
	if got := countsSince(before, s.servedCounts()); got["GRAPH_RECOMPUTE"] != 1 || got["GRAPH_COMPUTE"] != 0 {
		t.Errorf("device 1 again: requests %v", got)
	}
	step("device 0 after device 1", 11, recompute, nil)

	// Freeing any buffer of the connection makes the next compute resend its graph (a stored
	// graph over a freed buffer is rejected by tandem's server, undefined on ggml's).
	step("after a free", 12, map[string]int64{"SET_TENSOR": 1, "GRAPH_COMPUTE": 1, "GET_TENSOR": 1, "FREE_BUFFER": 1},
		func() {
			if err := other.buf.Free(); err != nil {
				t.Fatal(err)
			}
		})
	step("after a free, again", 13, recompute, nil)

	// An op parameter changes: the bytes differ, the graph is resent.
	ag.out.Src[1] = ag.out.Src[0] // out = a² + a²
	before = s.servedCounts()
	if err := ag.be.GraphCompute(ag.g); err != nil {
		t.Fatal(err)
	}
	got, err := core.GetFloat32s(ag.out)
	if err != nil {
		t.Fatal(err)
	}
	if got[3] != 2*(3+13)*(3+13) {
		t.Errorf("a² + a²: out[3] = %v, want %v", got[3], 2*16*16)
	}
	if d := countsSince(before, s.servedCounts()); d["GRAPH_COMPUTE"] != 1 || d["GRAPH_RECOMPUTE"] != 0 {
		t.Errorf("changed sources: requests %v", d)
	}
	if n := s.servedCounts()["DEVICE_COUNT"]; n != 1 {
		t.Errorf("%d DEVICE_COUNT requests, want 1 (Dial's)", n)
	}
	if err := c.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := s.servedCounts()["DEVICE_COUNT"]; n != 2 {
		t.Errorf("%d DEVICE_COUNT requests after Sync, want 2", n)
	}
}

// A graph the server rejects is not reported by GraphCompute (it has no reply) but by the next
// call that waits for a reply, as an error wrapping ErrConnectionLost that names the graph.
func TestRejectedGraphNamed(t *testing.T) {
	s := &Server{Backends: cpuBackends(t, 1), MaxPayload: 700} // the graph's 12+16+3·296 bytes are too many, an upload's 304+256 are not
	c := serveTest(t, s)
	ag := newAddGraph(t, c, 0)
	if err := core.SetFloat32s(ag.a, make([]float32, 64)); err != nil {
		t.Fatal(err)
	}
	if err := ag.be.GraphCompute(ag.g); err != nil {
		t.Fatalf("sending: %v", err)
	}
	_, err := core.GetFloat32s(ag.out)
	if !errors.Is(err, ErrConnectionLost) || !strings.Contains(err.Error(), "GRAPH_COMPUTE on "+ag.be.Name()) {
		t.Fatalf("reading after a rejected graph: %v, want connection lost naming the graph", err)
	}
	if err := c.Sync(context.Background()); !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("Sync after loss: %v", err)
	}
	if err := ag.be.GraphCompute(ag.g); !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("GraphCompute after loss: %v", err)
	}
}

// GRAPH_RECOMPUTE from any client (ggml's sends it for a reused scheduler graph) needs a graph
// stored for that device on that connection, whose buffers are all still allocated.
func TestServerRecomputeChecks(t *testing.T) {
	for _, tc := range []struct {
		name string
		prep func(t *testing.T, c *Client, ag *addGraph)
		dev  uint32
	}{
		{"no stored graph", nil, 0},
		{"device out of range", func(t *testing.T, c *Client, ag *addGraph) { ag.run(t, 1) }, 2},
		{"graph of the other device", func(t *testing.T, c *Client, ag *addGraph) { ag.run(t, 1) }, 1},
		{"buffer freed since", func(t *testing.T, c *Client, ag *addGraph) {
			ag.run(t, 1)
			if err := ag.buf.Free(); err != nil {
				t.Fatal(err)
			}
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{Backends: cpuBackends(t, 2)}
			c := serveTest(t, s)
			ag := newAddGraph(t, c, 0)
			if tc.prep != nil {
				tc.prep(t, c, ag)
			}
			if _, err := c.call(context.Background(), cmdGraphRecompute, -1, le.AppendUint32(nil, tc.dev)); err != nil {
				t.Fatal(err)
			}
			if err := c.Sync(context.Background()); !errors.Is(err, ErrConnectionLost) {
				t.Fatalf("GRAPH_RECOMPUTE accepted: Sync gives %v", err)
			}
		})
	}
	// And a stored graph is run again, reading the inputs uploaded since.
	s := &Server{Backends: cpuBackends(t, 1)}
	c := serveTest(t, s)
	ag := newAddGraph(t, c, 0)
	ag.run(t, 1)
	if err := core.SetFloat32s(ag.a, make([]float32, 64)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.call(context.Background(), cmdGraphRecompute, -1, le.AppendUint32(nil, 0)); err != nil {
		t.Fatal(err)
	}
	got, err := core.GetFloat32s(ag.out)
	if err != nil || got[5] != 0 {
		t.Fatalf("recompute on zeros: %v %v", got[:8], err)
	}
}

// gateBackend is a backend whose GraphCompute waits at a gate until n computes are inside it at
// once: under one lock for all devices, two connections on different devices could never meet.
type gateBackend struct {
	core.Backend
	g *gate
}

type gate struct {
	mu      sync.Mutex
	inside  int
	n       int
	open    chan struct{}
	timeout bool
}

func (b *gateBackend) GraphCompute(g *core.Graph) error {
	b.g.mu.Lock()
	b.g.inside++
	if b.g.inside == b.g.n {
		close(b.g.open)
	}
	b.g.mu.Unlock()
	select {
	case <-b.g.open:
	case <-time.After(10 * time.Second):
		b.g.mu.Lock()
		b.g.timeout = true
		b.g.mu.Unlock()
	}
	return b.Backend.GraphCompute(g)
}

// Two connections computing on different devices run at the same time (one lock per device);
// two on the same device take turns. Run with -race.
func TestServerLockPerDevice(t *testing.T) {
	bes := cpuBackends(t, 2)
	gt := &gate{n: 2, open: make(chan struct{})}
	s := &Server{Backends: []core.Backend{&gateBackend{bes[0], gt}, &gateBackend{bes[1], gt}}}
	c0 := serveTest(t, s)
	c1 := serveTest(t, s)
	ag0, ag1 := newAddGraph(t, c0, 0), newAddGraph(t, c1, 1)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for _, ag := range []*addGraph{ag0, ag1} {
		wg.Go(func() {
			for k := range 5 {
				if err := ag.try(float32(k)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	gt.mu.Lock()
	timeout := gt.timeout
	gt.mu.Unlock()
	if timeout {
		t.Fatal("computes on devices 0 and 1 never ran at the same time")
	}

	// One backend listed twice is one device to lock.
	s2 := &Server{Backends: []core.Backend{bes[0], bes[1], bes[0]}}
	s2.lockDevices(0)()
	if s2.devLock[2] != 0 || s2.devLock[1] != 1 {
		t.Fatalf("lock of each device: %v, want [0 1 0]", s2.devLock)
	}

	// Many connections on both devices at once, under -race.
	addr := listenTest(t, &Server{Backends: bes})
	for k := range 4 {
		ag := newAddGraph(t, dialTest(t, addr), k%2)
		wg.Go(func() {
			for r := range 10 {
				if err := ag.try(float32(r + k)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
