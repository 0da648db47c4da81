package rpc

import (
	"bytes"
	"context"
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// Backend computes graphs on one remote device.
type Backend struct {
	d *Device
}

// Name is the device name, "RPC<index>[host:port]".
func (be *Backend) Name() string {
	if be.zero() {
		return ""
	}
	return be.d.name
}

// Device returns the remote device.
func (be *Backend) Device() core.Device {
	if be.zero() {
		return nil
	}
	return be.d
}

// DefaultBufferType is the device's buffer type.
func (be *Backend) DefaultBufferType() core.BufferType {
	if be.zero() {
		return nil
	}
	return be.d.bt
}

// Synchronize sends nothing, as ggml's RPC client: the server runs requests in the order sent, so
// every later request (reading a result, copying it) already waits for earlier graphs and uploads.
// It returns the error of a connection already known to be lost, else nil. Client.Sync confirms
// with a round trip that the server accepted everything sent so far.
func (be *Backend) Synchronize() error {
	if be.zero() {
		return errZeroBackend
	}
	if err := be.d.c.Err(); err != nil {
		return fmt.Errorf("tandem: rpc: %s: synchronize: %w", be.d.name, err)
	}
	return nil
}

// Close does nothing: the Client owns the connection.
func (be *Backend) Close() error { return nil }

// GraphCompute runs g on the remote device; see GraphComputeContext. A nil g is an error.
func (be *Backend) GraphCompute(g *core.Graph) error {
	return be.GraphComputeContext(context.Background(), g)
}

// GraphComputeContext sends g to the remote device, as ggml's client does: GRAPH_COMPUTE with the
// serialized graph, or GRAPH_RECOMPUTE (4 bytes) when the serialization is byte for byte the last
// graph sent to this device on this connection — same tensors, shapes, strides, ops, parameters,
// flags, buffers and data addresses — and no buffer of the connection was freed since. The server
// keeps that graph per device and connection and runs it again; anything that changed, a tensor
// moved by the graph allocator included, makes the bytes differ and the graph is resent.
//
// Neither command has a reply: GraphComputeContext returns once the request is sent (ctx bounds
// the sending), without a round trip. The server runs it before any later request on the
// connection, so results read afterwards are the graph's; a graph the server rejects, a dropped
// connection or a hung server makes the next call that waits for a reply (reading a result, a
// copy, Client.Sync) fail with an error wrapping ErrConnectionLost that names the graph, bounded
// by that call's ctx or Client.Timeout. A nil g is an error; a nil ctx means context.Background().
func (be *Backend) GraphComputeContext(ctx context.Context, g *core.Graph) error {
	if be.zero() {
		return errZeroBackend
	}
	if g == nil {
		return fmt.Errorf("tandem: rpc: %s: GraphCompute: nil graph", be.d.name)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := g.Err(); err != nil {
		return err
	}
	if err := core.CheckInputsSet(g); err != nil {
		return err
	}
	payload, err := be.serialize(g)
	if err != nil {
		return fmt.Errorf("tandem: rpc: %s: %w", be.d.name, err)
	}
	d, c := be.d, be.d.c
	c.mu.Lock()
	defer c.mu.Unlock()
	cmd := byte(cmdGraphCompute)
	if d.lastGraph != nil && bytes.Equal(d.lastGraph, payload) {
		cmd, payload = cmdGraphRecompute, le.AppendUint32(nil, d.index)
	} else {
		d.lastGraph = nil // a failed send leaves no stored graph to rely on
	}
	if _, err := c.callLocked(ctx, cmd, -1, payload); err != nil {
		return fmt.Errorf("tandem: rpc: %s: graph compute: %w", d.name, err)
	}
	if cmd == cmdGraphCompute {
		d.lastGraph = payload
	}
	c.lastGraph = cmdName(cmd) + " on " + d.name
	return nil
}

// serialize lays out g as ggml's client does: node ids in execution order, then every tensor
// reachable from them through sources and view sources once, sources first.
func (be *Backend) serialize(g *core.Graph) ([]byte, error) {
	nodes := make([]*core.Tensor, 0, len(g.Nodes()))
	for _, n := range g.Nodes() {
		// A view computes nothing. A scheduler split may hold a view of memory on another
		// device (a view of a host input whose consumer reads a copy): ggml's client sends it
		// without a buffer and its server skips it; tandem leaves it out. A node of the graph
		// that reads it still fails below.
		if b, ok := n.Buffer.(*Buffer); n.Op.IsView() && (!ok || b.client() != be.d.c) {
			continue
		}
		nodes = append(nodes, n)
	}
	ids := make(map[*core.Tensor]uint64, 2*len(nodes))
	var order []*core.Tensor
	var visit func(t *core.Tensor) error
	visit = func(t *core.Tensor) error {
		if _, ok := ids[t]; ok {
			return nil
		}
		ids[t] = uint64(len(ids) + 1)
		for _, s := range wireSources(t) {
			if s != nil && s != t {
				if err := visit(s); err != nil {
					return err
				}
			}
		}
		if t.ViewSrc != nil {
			if err := visit(t.ViewSrc); err != nil {
				return err
			}
		}
		order = append(order, t)
		return nil
	}
	for _, n := range nodes {
		if !be.d.SupportsOp(n) {
			return nil, fmt.Errorf("node %v: op %v cannot be sent over RPC", n, n.Op)
		}
		if err := visit(n); err != nil {
			return nil, err
		}
	}
	isNode := make(map[*core.Tensor]bool, len(nodes))
	uses := make(map[*core.Tensor]int32, len(order))
	for _, n := range nodes {
		isNode[n] = true
		for _, s := range wireSources(n) {
			if s != nil {
				uses[s]++
			}
		}
	}
	wires := make([]wireTensor, len(order))
	for i, t := range order {
		w, err := be.wireTensor(t, ids)
		if err != nil {
			return nil, err
		}
		if isNode[t] && t.Op != core.OpNone {
			w.Flags |= flagCompute
		}
		w.UseCount = uses[t]
		if t.Op == core.OpRMSNorm {
			// The server fuses RMS_NORM with a following MUL when the count is exactly 1, but a
			// scheduler split cannot see uses in other splits: 0 keeps the norm's output written.
			w.UseCount = 0
		}
		wires[i] = w
	}
	nodeIDs := make([]uint64, len(nodes))
	for i, n := range nodes {
		nodeIDs[i] = ids[n]
	}
	return encodeGraph(be.d.index, nodeIDs, wires), nil
}

func (be *Backend) wireTensor(t *core.Tensor, ids map[*core.Tensor]uint64) (wireTensor, error) {
	b, ok := t.Buffer.(*Buffer)
	if !ok || b.client() != be.d.c {
		return wireTensor{}, fmt.Errorf("tensor %v is not in a buffer of %s", t, be.d.c.addr)
	}
	if b.freed {
		return wireTensor{}, fmt.Errorf("tensor %v: its buffer was freed", t)
	}
	if !fits32(t) {
		return wireTensor{}, fmt.Errorf("tensor %v: shape or strides do not fit 32 bits", t)
	}
	op, ok := toGGML[t.Op]
	if !ok {
		return wireTensor{}, fmt.Errorf("tensor %v: op %v has no ggml id", t, t.Op)
	}
	w := wireTensor{ID: ids[t], Type: uint32(t.Type), Buffer: b.handle, Data: b.base + uint64(t.Offset), Op: op,
		Params: wireParams(t)}
	for i := 0; i < 4; i++ {
		w.Ne[i], w.Nb[i] = uint32(t.Ne[i]), uint32(t.Nb[i])
	}
	w.Flags = int32(t.Flags & (core.FlagInput | core.FlagOutput | core.FlagParam | core.FlagLoss))
	for i, s := range wireSources(t) {
		if s != nil {
			w.Src[i] = ids[s]
		}
	}
	if t.ViewSrc != nil {
		w.ViewSrc, w.ViewOffs = ids[t.ViewSrc], uint64(t.ViewOffs)
	}
	w.setName(t.Name)
	return w, nil
}
