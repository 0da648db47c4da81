package gpuops

import (
	"encoding/binary"
	"math"
)

// Push packs a shader's parameters: 32-bit little-endian values in order (Vulkan's push-constant
// block; in OpenGL a std140 uniform block, the same bytes since it holds only 32-bit scalars).
type Push struct{ b []byte }

// U32 appends 32-bit unsigned values.
func (p *Push) U32(vs ...uint32) *Push {
	for _, v := range vs {
		p.b = binary.LittleEndian.AppendUint32(p.b, v)
	}
	return p
}

// I32 appends 32-bit signed values.
func (p *Push) I32(vs ...int32) *Push {
	for _, v := range vs {
		p.b = binary.LittleEndian.AppendUint32(p.b, uint32(v))
	}
	return p
}

// F32 appends float32 values.
func (p *Push) F32(vs ...float32) *Push {
	for _, v := range vs {
		p.b = binary.LittleEndian.AppendUint32(p.b, math.Float32bits(v))
	}
	return p
}

// Bytes returns the packed bytes.
func (p *Push) Bytes() []byte { return p.b }

// Reset empties p for the next dispatch.
func (p *Push) Reset() *Push { p.b = p.b[:0]; return p }
