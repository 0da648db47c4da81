package rpc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Protocol version spoken by this package.
const (
	ProtoMajor = 5
	ProtoMinor = 1
	ProtoPatch = 0
)

// Command ids (ggml's rpc_cmd).
const (
	cmdAllocBuffer    = 0
	cmdGetAlignment   = 1
	cmdGetMaxSize     = 2
	cmdBufferGetBase  = 3
	cmdFreeBuffer     = 4
	cmdBufferClear    = 5
	cmdSetTensor      = 6
	cmdSetTensorHash  = 7
	cmdGetTensor      = 8
	cmdCopyTensor     = 9
	cmdGraphCompute   = 10
	cmdGetDeviceMem   = 11
	cmdInitTensor     = 12
	cmdGetAllocSize   = 13
	cmdHello          = 14
	cmdDeviceCount    = 15
	cmdGraphRecompute = 16
	cmdMemsetTensor   = 17
	cmdCount          = 18
)

// Wire sizes (every struct is byte-packed).
const (
	tensorSize       = 296 // serialized rpc_tensor
	helloReqSize     = 24
	helloRespSize    = 28
	allocReqSize     = 12
	allocRespSize    = 16
	deviceReqSize    = 4
	handleReqSize    = 8
	clearReqSize     = 9
	setHeaderSize    = tensorSize + 8 // tensor + offset, then data
	setHashReqSize   = tensorSize + 16
	getTensorReqSize = tensorSize + 16
	copyReqSize      = 2 * tensorSize
	memsetReqSize    = tensorSize + 17
	allocSizeReqSize = 4 + tensorSize + maxSrc*tensorSize
	memRespSize      = 16
	graphHeaderSize  = 12 // device, n_nodes, n_tensors (without the id list)

	maxSrc       = 10
	maxOpParams  = 16
	maxName      = 64
	hashMinBytes = 10 << 20 // SET_TENSOR_HASH only for uploads strictly larger than this
)

// Tensor flags on the wire.
const (
	flagInput   = 1
	flagOutput  = 2
	flagParam   = 4
	flagLoss    = 8
	flagCompute = 16
)

// fixedRequestSize is the exact payload size of each fixed-size request (-1: variable length).
var fixedRequestSize = [cmdCount]int64{
	cmdAllocBuffer:    allocReqSize,
	cmdGetAlignment:   deviceReqSize,
	cmdGetMaxSize:     deviceReqSize,
	cmdBufferGetBase:  handleReqSize,
	cmdFreeBuffer:     handleReqSize,
	cmdBufferClear:    clearReqSize,
	cmdSetTensor:      -1,
	cmdSetTensorHash:  setHashReqSize,
	cmdGetTensor:      getTensorReqSize,
	cmdCopyTensor:     copyReqSize,
	cmdGraphCompute:   -1,
	cmdGetDeviceMem:   deviceReqSize,
	cmdInitTensor:     tensorSize,
	cmdGetAllocSize:   allocSizeReqSize,
	cmdHello:          helloReqSize,
	cmdDeviceCount:    0,
	cmdGraphRecompute: deviceReqSize,
	cmdMemsetTensor:   memsetReqSize,
}

var cmdNames = [cmdCount]string{"ALLOC_BUFFER", "GET_ALIGNMENT", "GET_MAX_SIZE", "BUFFER_GET_BASE",
	"FREE_BUFFER", "BUFFER_CLEAR", "SET_TENSOR", "SET_TENSOR_HASH", "GET_TENSOR", "COPY_TENSOR",
	"GRAPH_COMPUTE", "GET_DEVICE_MEMORY", "INIT_TENSOR", "GET_ALLOC_SIZE", "HELLO", "DEVICE_COUNT",
	"GRAPH_RECOMPUTE", "MEMSET_TENSOR"}

func cmdName(c byte) string {
	if int(c) < len(cmdNames) {
		return cmdNames[c]
	}
	return fmt.Sprintf("command %d", c)
}

// hasReply reports whether the server answers cmd (SET_TENSOR, GRAPH_COMPUTE and GRAPH_RECOMPUTE
// get no reply at all).
func hasReply(cmd byte) bool {
	return cmd != cmdSetTensor && cmd != cmdGraphCompute && cmd != cmdGraphRecompute
}

var le = binary.LittleEndian

// wireTensor is the decoded rpc_tensor (296 bytes on the wire).
type wireTensor struct {
	ID       uint64
	Type     uint32
	Buffer   uint64
	Ne       [4]uint32
	Nb       [4]uint32
	Op       uint32
	Params   [maxOpParams]int32
	Flags    int32
	Src      [maxSrc]uint64
	ViewSrc  uint64
	ViewOffs uint64
	Data     uint64
	Name     [maxName]byte
	UseCount int32
}

// put writes t into b[:296].
func (t *wireTensor) put(b []byte) {
	_ = b[tensorSize-1]
	le.PutUint64(b[0:], t.ID)
	le.PutUint32(b[8:], t.Type)
	le.PutUint64(b[12:], t.Buffer)
	for i := 0; i < 4; i++ {
		le.PutUint32(b[20+4*i:], t.Ne[i])
		le.PutUint32(b[36+4*i:], t.Nb[i])
	}
	le.PutUint32(b[52:], t.Op)
	for i, p := range t.Params {
		le.PutUint32(b[56+4*i:], uint32(p))
	}
	le.PutUint32(b[120:], uint32(t.Flags))
	for i, s := range t.Src {
		le.PutUint64(b[124+8*i:], s)
	}
	le.PutUint64(b[204:], t.ViewSrc)
	le.PutUint64(b[212:], t.ViewOffs)
	le.PutUint64(b[220:], t.Data)
	copy(b[228:292], t.Name[:])
	le.PutUint32(b[292:], uint32(t.UseCount))
}

// getTensor decodes b[:296].
func getTensor(b []byte) wireTensor {
	_ = b[tensorSize-1]
	var t wireTensor
	t.ID = le.Uint64(b[0:])
	t.Type = le.Uint32(b[8:])
	t.Buffer = le.Uint64(b[12:])
	for i := 0; i < 4; i++ {
		t.Ne[i] = le.Uint32(b[20+4*i:])
		t.Nb[i] = le.Uint32(b[36+4*i:])
	}
	t.Op = le.Uint32(b[52:])
	for i := range t.Params {
		t.Params[i] = int32(le.Uint32(b[56+4*i:]))
	}
	t.Flags = int32(le.Uint32(b[120:]))
	for i := range t.Src {
		t.Src[i] = le.Uint64(b[124+8*i:])
	}
	t.ViewSrc = le.Uint64(b[204:])
	t.ViewOffs = le.Uint64(b[212:])
	t.Data = le.Uint64(b[220:])
	copy(t.Name[:], b[228:292])
	t.UseCount = int32(le.Uint32(b[292:]))
	return t
}

// name returns the tensor's name up to its first NUL (at most 63 bytes).
func (t *wireTensor) name() string {
	n := t.Name[:maxName-1]
	for i, c := range n {
		if c == 0 {
			return string(n[:i])
		}
	}
	return string(n)
}

func (t *wireTensor) setName(s string) {
	t.Name = [maxName]byte{}
	if len(s) > maxName-1 {
		s = s[:maxName-1]
	}
	copy(t.Name[:], s)
}

// graphPayload is a decoded GRAPH_COMPUTE request.
type graphPayload struct {
	Device  uint32
	Nodes   []uint64
	Tensors []wireTensor
}

// encodeGraph lays out a GRAPH_COMPUTE payload: device, n_nodes, ids, n_tensors, tensors.
func encodeGraph(device uint32, nodes []uint64, tensors []wireTensor) []byte {
	b := make([]byte, graphHeaderSize+8*len(nodes)+tensorSize*len(tensors))
	le.PutUint32(b[0:], device)
	le.PutUint32(b[4:], uint32(len(nodes)))
	off := 8
	for _, id := range nodes {
		le.PutUint64(b[off:], id)
		off += 8
	}
	le.PutUint32(b[off:], uint32(len(tensors)))
	off += 4
	for i := range tensors {
		tensors[i].put(b[off:])
		off += tensorSize
	}
	return b
}

// Limits a decoder enforces before allocating anything.
const (
	maxGraphNodes   = 1 << 20
	maxGraphTensors = 1 << 21
)

var errShort = errors.New("payload too short")

// decodeGraph parses a GRAPH_COMPUTE payload with overflow-safe size checks. Trailing bytes are
// ignored, as ggml's server does.
func decodeGraph(b []byte) (*graphPayload, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("graph: %w (%d bytes, want at least 12)", errShort, len(b))
	}
	g := &graphPayload{Device: le.Uint32(b[0:])}
	n := uint64(le.Uint32(b[4:]))
	if n > maxGraphNodes {
		return nil, fmt.Errorf("graph: %d nodes is over the limit %d", n, maxGraphNodes)
	}
	need := 8 + 8*n + 4
	if uint64(len(b)) < need {
		return nil, fmt.Errorf("graph: %w: %d nodes need %d bytes, have %d", errShort, n, need, len(b))
	}
	g.Nodes = make([]uint64, n)
	off := uint64(8)
	for i := range g.Nodes {
		g.Nodes[i] = le.Uint64(b[off:])
		off += 8
	}
	nt := uint64(le.Uint32(b[off:]))
	off += 4
	if nt > maxGraphTensors {
		return nil, fmt.Errorf("graph: %d tensors is over the limit %d", nt, maxGraphTensors)
	}
	if (uint64(len(b))-off)/tensorSize < nt {
		return nil, fmt.Errorf("graph: %w: %d tensors need %d bytes after the node list, have %d",
			errShort, nt, nt*tensorSize, uint64(len(b))-off)
	}
	g.Tensors = make([]wireTensor, nt)
	for i := range g.Tensors {
		g.Tensors[i] = getTensor(b[off:])
		off += tensorSize
	}
	return g, nil
}

// request is one decoded frame from a client.
type request struct {
	Cmd     byte
	Payload []byte
}

// maxPayload bounds variable-length requests (SET_TENSOR, GRAPH_COMPUTE) a server reads.
const defaultMaxPayload = 1 << 32

// readRequest reads one frame: command byte, u64 length, payload. Fixed-size commands must carry
// exactly their struct size; variable ones at most maxPayload bytes (read in pieces so a lying
// length cannot make the reader allocate more than it receives plus one piece).
func readRequest(r io.Reader, maxPayload uint64) (request, error) {
	var hdr [9]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return request{}, err
	}
	req := request{Cmd: hdr[0]}
	n := le.Uint64(hdr[1:])
	if req.Cmd >= cmdCount {
		return req, fmt.Errorf("unknown command %d", req.Cmd)
	}
	if want := fixedRequestSize[req.Cmd]; want >= 0 {
		if n != uint64(want) {
			return req, fmt.Errorf("%s: payload of %d bytes, want exactly %d", cmdName(req.Cmd), n, want)
		}
	} else if n > maxPayload {
		return req, fmt.Errorf("%s: payload of %d bytes is over the limit %d", cmdName(req.Cmd), n, maxPayload)
	}
	p, err := readChunked(r, n)
	if err != nil {
		return req, fmt.Errorf("%s: reading %d-byte payload: %w", cmdName(req.Cmd), n, err)
	}
	req.Payload = p
	return req, nil
}

// readChunked reads exactly n bytes, growing the buffer as data arrives (at most 16 MiB ahead).
func readChunked(r io.Reader, n uint64) ([]byte, error) {
	const step = 16 << 20
	if n <= step {
		b := make([]byte, n)
		_, err := io.ReadFull(r, b)
		return b, err
	}
	b := make([]byte, 0, step)
	for uint64(len(b)) < n {
		k := min(n-uint64(len(b)), step)
		if uint64(cap(b)-len(b)) < k {
			nb := make([]byte, len(b), min(n, uint64(2*cap(b))+k))
			copy(nb, b)
			b = nb
		}
		start := len(b)
		b = b[:start+int(k)]
		if _, err := io.ReadFull(r, b[start:]); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// decodeRequest checks a frame's payload shape for its command (used by the server before acting
// and by the fuzz target). It returns an error for anything a server must refuse at this level.
func decodeRequest(b []byte) (request, error) {
	if len(b) < 9 {
		return request{}, fmt.Errorf("frame: %w (%d bytes)", errShort, len(b))
	}
	req := request{Cmd: b[0]}
	n := le.Uint64(b[1:])
	if req.Cmd >= cmdCount {
		return req, fmt.Errorf("unknown command %d", req.Cmd)
	}
	if uint64(len(b)-9) < n {
		return req, fmt.Errorf("%s: %w: %d of %d payload bytes", cmdName(req.Cmd), errShort, len(b)-9, n)
	}
	if want := fixedRequestSize[req.Cmd]; want >= 0 && n != uint64(want) {
		return req, fmt.Errorf("%s: payload of %d bytes, want exactly %d", cmdName(req.Cmd), n, want)
	}
	req.Payload = b[9 : 9+n]
	if req.Cmd == cmdSetTensor && n < setHeaderSize {
		return req, fmt.Errorf("SET_TENSOR: %w: %d bytes, want at least %d", errShort, n, setHeaderSize)
	}
	if req.Cmd == cmdGraphCompute {
		if _, err := decodeGraph(req.Payload); err != nil {
			return req, err
		}
	}
	return req, nil
}

// appendFrame appends a request frame to dst.
func appendFrame(dst []byte, cmd byte, payload ...[]byte) []byte {
	var n uint64
	for _, p := range payload {
		n += uint64(len(p))
	}
	dst = append(dst, cmd)
	dst = le.AppendUint64(dst, n)
	for _, p := range payload {
		dst = append(dst, p...)
	}
	return dst
}

// fnv1a64 is the hash SET_TENSOR_HASH names data by.
func fnv1a64(b []byte) uint64 {
	h := uint64(0xcbf29ce484222325)
	for _, c := range b {
		h ^= uint64(c)
		h *= 0x100000001b3
	}
	return h
}
