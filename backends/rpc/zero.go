package rpc

import "errors"

// The errors of zero values: a Client comes from Dial, and its devices, backends, buffer types
// and buffers from the Client. Methods of a zero value return these (or a zero result where they
// return no error); none panics.
var (
	errZeroClient     = errors.New("tandem: rpc: zero Client: create one with rpc.Dial")
	errZeroDevice     = errors.New("tandem: rpc: zero Device: get one from a Client (rpc.Dial, then Client.Device)")
	errZeroBackend    = errors.New("tandem: rpc: zero Backend: create one with Device.NewBackend on a device of rpc.Dial's Client")
	errZeroBufferType = errors.New("tandem: rpc: zero BufferType: get one from Device.BufferType on a device of rpc.Dial's Client")
	errZeroBuffer     = errors.New("tandem: rpc: zero Buffer: allocate one with BufferType.Alloc on a device of rpc.Dial's Client")
)

func (c *Client) zero() bool      { return c.nc == nil }
func (d *Device) zero() bool      { return d.c == nil }
func (be *Backend) zero() bool    { return be.d == nil }
func (bt *BufferType) zero() bool { return bt.d == nil }
func (b *Buffer) zero() bool      { return b.bt == nil }
