// Package rpc speaks ggml's RPC protocol, version 5.1.0 (ggml commit d99724f2): a client that
// turns the devices of a remote server (llama.cpp's rpc-server or tandem's own) into core.Device
// values the scheduler mixes with local ones, and a server that exposes tandem backends to any ggml
// RPC client.
//
// Client:
//
//	c, err := rpc.Dial(ctx, "127.0.0.1:50052") // HELLO, version check, device count
//	be, err := c.Devices()[0].NewBackend()      // a core.Backend of type GPU
//	s, err := scheduler.New([]core.Backend{be, cpuBackend}, scheduler.Options{})
//
// GraphCompute sends GRAPH_COMPUTE, or GRAPH_RECOMPUTE when the graph serializes to the same bytes
// as the last one sent to that device (as ggml's client reuses a scheduled graph), and returns
// without a round trip: the protocol gives neither command a reply, and the server runs requests
// in order, so reading a result waits for the graph. A graph the server rejects, a dropped
// connection or a hung server makes the next call that waits for a reply (a read, a copy,
// Client.Sync) fail with an error wrapping ErrConnectionLost that names the graph; that wait is
// bounded by the call's context or Client.Timeout, never a hang when one is set. Set
// Client.GGMLCompat when the server is ggml's: SupportsOp then refuses the layouts ggml's CPU
// backend asserts on. Custom ops (MAP_CUSTOM1..3, CUSTOM: a Go function) are never sent: a
// function cannot travel (ggml's RPC cannot send its function pointers either), so SupportsOp
// refuses them and a scheduler runs them on a local CPU backend.
//
// Server:
//
//	err := rpc.Serve(ctx, listener, cpuBackend, vulkanBackend) // devices 0 and 1
//
// Unlike ggml's server it serves several connections at once, each with its own buffers (freed
// when it closes) and its last graph per device (for GRAPH_RECOMPUTE); requests on different
// devices run in parallel, those on one device one at a time. It checks every request before acting on it: exact request sizes, buffer
// handles of that connection, tensor extents inside their buffers with overflow-checked
// arithmetic, accesses inside their tensors, and graphs rebuilt op by op with tandem's own op
// constructors (op ids, unary and GLU kinds, sources, views, shapes, strides and parameters must
// match what the constructor gives; no cycles but a cast's self-reference; no node id 0). A bad
// request closes its connection with the reason logged. The protocol has no authentication or
// encryption: serve it on loopback or a trusted network only.
package rpc
