//go:build gl && cgo

package gl

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/go-gl/gl/v4.3-core/gl"
	"github.com/tandem-ml/tandem/backends/internal/gpuops"
)

// The GL runtime: one OS thread per device owns the context; every GL call runs there, handed over
// as a closure through a channel (a GL context is current on one thread only).

// errClosed is wrapped by errors from a device whose context was torn down.
var errClosed = errors.New("GL context closed")

// devInfo describes the GL device: its strings, and its limits in the terms of the op encoders.
type devInfo struct {
	Renderer, Vendor, Version, GLSL string
	uboAlign                        uint64 // GL_UNIFORM_BUFFER_OFFSET_ALIGNMENT
	ops                             gpuops.Device
}

// glThread is a device's GL context and the goroutine (locked to its OS thread) that runs its calls.
type glThread struct {
	work  chan func()
	egl   *eglContext
	info  devInfo
	debug bool

	// Owned by the GL thread.
	programs map[string]*program
	ubo      uint32 // ring of push constants (uniform blocks)
	uboSize  int
	uboOff   int

	mu     sync.Mutex
	closed bool
}

// startThread creates the context on a new locked thread. debug asks for a debug context whose
// messages (KHR_debug) of type error, undefined or deprecated behaviour fail the call that caused them.
func startThread(debug bool) (*glThread, error) {
	t := &glThread{work: make(chan func()), debug: debug, programs: map[string]*program{}}
	ready := make(chan error)
	go func() {
		runtime.LockOSThread() // the context stays current on this thread until it ends
		e, err := openEGL(debug)
		if err != nil {
			ready <- err
			return
		}
		if err := t.init(); err != nil {
			e.close()
			ready <- err
			return
		}
		t.egl = e
		ready <- nil
		for f := range t.work {
			f()
		}
		t.release()
		e.close()
	}()
	if err := <-ready; err != nil {
		return nil, err
	}
	return t, nil
}

// do runs f on the GL thread and returns its error, or the first GL error or debug message f caused.
func (t *glThread) do(f func() error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return errClosed
	}
	done := make(chan error, 1)
	t.work <- func() {
		err := f()
		done <- errors.Join(err, t.check())
	}
	return <-done
}

// close ends the thread and destroys the context (and with it every buffer and program).
func (t *glThread) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.closed = true
		close(t.work)
	}
}

// init loads the GL entry points and reads the limits; the context is current.
func (t *glThread) init() error {
	if err := gl.InitWithProcAddrFunc(eglProcAddress); err != nil {
		return fmt.Errorf("loading OpenGL 4.3 functions: %w", err)
	}
	i := &t.info
	i.Renderer = gl.GoStr(gl.GetString(gl.RENDERER))
	i.Vendor = gl.GoStr(gl.GetString(gl.VENDOR))
	i.Version = gl.GoStr(gl.GetString(gl.VERSION))
	i.GLSL = gl.GoStr(gl.GetString(gl.SHADING_LANGUAGE_VERSION))
	var maj, min int32
	gl.GetIntegerv(gl.MAJOR_VERSION, &maj)
	gl.GetIntegerv(gl.MINOR_VERSION, &min)
	if maj < 4 || maj == 4 && min < 3 {
		return fmt.Errorf("OpenGL %d.%d (%s): compute shaders need 4.3", maj, min, i.Version)
	}
	r := strings.ToLower(i.Renderer)
	o := &i.ops
	// A software rasterizer (llvmpipe, softpipe, swrast) takes the encoders' CPU-device kernels.
	o.Software = strings.Contains(r, "llvmpipe") || strings.Contains(r, "softpipe") || strings.Contains(r, "swrast")
	geti := func(p uint32) uint32 {
		var v int32
		gl.GetIntegerv(p, &v)
		return uint32(max(v, 0))
	}
	for k := range 3 {
		var v int32
		gl.GetIntegeri_v(gl.MAX_COMPUTE_WORK_GROUP_COUNT, uint32(k), &v)
		o.MaxComputeWorkGroupCount[k] = uint32(max(v, 0))
		gl.GetIntegeri_v(gl.MAX_COMPUTE_WORK_GROUP_SIZE, uint32(k), &v)
		o.MaxComputeWorkGroupSize[k] = uint32(max(v, 0))
	}
	o.MaxComputeWorkGroupInvocations = geti(gl.MAX_COMPUTE_WORK_GROUP_INVOCATIONS)
	o.MaxComputeSharedMemorySize = geti(gl.MAX_COMPUTE_SHARED_MEMORY_SIZE)
	o.MaxStorageBufferRange = geti(gl.MAX_SHADER_STORAGE_BLOCK_SIZE)
	o.MinStorageBufferOffsetAlignment = uint64(max(geti(gl.SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT), 4))
	i.uboAlign = uint64(max(geti(gl.UNIFORM_BUFFER_OFFSET_ALIGNMENT), 4))
	// The GLSL prelude emulates 16-bit storage with 32-bit words: 16-bit stores rewrite words.
	o.Storage16Bit, o.WordWrites = true, true
	if geti(gl.MAX_COMPUTE_SHADER_STORAGE_BLOCKS) < 8 || o.MaxComputeWorkGroupInvocations < 256 {
		return fmt.Errorf("%s: compute limits too small (storage blocks %d, invocations %d)",
			i.Renderer, geti(gl.MAX_COMPUTE_SHADER_STORAGE_BLOCKS), o.MaxComputeWorkGroupInvocations)
	}
	if t.debug {
		gl.Enable(gl.DEBUG_OUTPUT)
		gl.Enable(gl.DEBUG_OUTPUT_SYNCHRONOUS)
		gl.DebugMessageControl(gl.DONT_CARE, gl.DONT_CARE, gl.DONT_CARE, 0, nil, true)
	}
	t.uboSize = 1 << 20
	gl.GenBuffers(1, &t.ubo)
	gl.BindBuffer(gl.UNIFORM_BUFFER, t.ubo)
	gl.BufferStorage(gl.UNIFORM_BUFFER, t.uboSize, nil, gl.DYNAMIC_STORAGE_BIT)
	return t.check()
}

// release deletes the GL objects the thread owns.
func (t *glThread) release() {
	for _, p := range t.programs {
		gl.DeleteProgram(p.id)
	}
	t.programs = nil
	gl.DeleteBuffers(1, &t.ubo)
}

// glErrorNames names glGetError's codes.
var glErrorNames = map[uint32]string{
	gl.INVALID_ENUM: "GL_INVALID_ENUM", gl.INVALID_VALUE: "GL_INVALID_VALUE", gl.INVALID_OPERATION: "GL_INVALID_OPERATION",
	gl.OUT_OF_MEMORY: "GL_OUT_OF_MEMORY", gl.INVALID_FRAMEBUFFER_OPERATION: "GL_INVALID_FRAMEBUFFER_OPERATION",
}

// check returns the pending GL errors and (on a debug context) the error-type debug messages.
func (t *glThread) check() error {
	var errs []string
	for range 8 {
		e := gl.GetError()
		if e == gl.NO_ERROR {
			break
		}
		name := glErrorNames[e]
		if name == "" {
			name = fmt.Sprintf("GL error %#x", e)
		}
		errs = append(errs, name)
	}
	if t.debug {
		errs = append(errs, debugMessages()...)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("OpenGL: %s", strings.Join(errs, "; "))
}

// debugMessages drains the debug log and returns the messages that report a fault.
func debugMessages() []string {
	var out []string
	const batch, bufSize = 16, 16 << 10
	buf := make([]uint8, bufSize)
	for {
		var sources, types, ids, sevs [batch]uint32
		var lengths [batch]int32
		n := gl.GetDebugMessageLog(batch, bufSize, &sources[0], &types[0], &ids[0], &sevs[0], &lengths[0], &buf[0])
		if n == 0 {
			return out
		}
		off := int32(0)
		for k := range n {
			msg := string(buf[off : off+max(lengths[k]-1, 0)])
			off += lengths[k]
			switch types[k] {
			case gl.DEBUG_TYPE_ERROR, gl.DEBUG_TYPE_UNDEFINED_BEHAVIOR, gl.DEBUG_TYPE_DEPRECATED_BEHAVIOR:
				out = append(out, "debug: "+msg)
			}
		}
	}
}

// glBuffer is a shader storage buffer (immutable storage, updated with glBufferSubData).
type glBuffer struct {
	t    *glThread
	id   uint32
	size uint64 // usable bytes
	cap  uint64 // allocated bytes (size rounded up, so bindings can end on a word)

	mu      sync.Mutex
	deleted bool
}

// newBuffer allocates size bytes (at least 16) on the device.
func (t *glThread) newBuffer(size uint64) (*glBuffer, error) {
	b := &glBuffer{t: t, size: size, cap: max((size+15)/16*16, 16)}
	err := t.do(func() error {
		gl.GenBuffers(1, &b.id)
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, b.id)
		gl.BufferStorage(gl.COPY_WRITE_BUFFER, int(b.cap), nil, gl.DYNAMIC_STORAGE_BIT)
		if e := gl.GetError(); e != gl.NO_ERROR {
			gl.DeleteBuffers(1, &b.id)
			return fmt.Errorf("glBufferStorage of %d bytes: %s", b.cap, glErrorNames[e])
		}
		// New storage holds undefined bytes: zero them, as Vulkan's and the CPU's fresh buffers are.
		var zero uint8
		gl.ClearBufferSubData(gl.COPY_WRITE_BUFFER, gl.R8UI, 0, int(b.cap), gl.RED_INTEGER, gl.UNSIGNED_BYTE, glPtr(&zero))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Size returns the buffer's usable bytes.
func (b *glBuffer) Size() uint64 { return b.size }

// live reports an error when the buffer was freed.
func (b *glBuffer) live() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.deleted {
		return errors.New("buffer was freed")
	}
	return nil
}

// Write copies data to the buffer at off (the caller checked the range).
func (b *glBuffer) Write(off uint64, data []byte) error {
	if err := b.live(); err != nil {
		return err
	}
	if len(data) == 0 {
		return nil
	}
	return b.t.do(func() error {
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, b.id)
		gl.BufferSubData(gl.COPY_WRITE_BUFFER, int(off), len(data), glPtr(&data[0]))
		return nil
	})
}

// Read copies len(dst) bytes from off; shader writes before it are made visible first.
func (b *glBuffer) Read(off uint64, dst []byte) error {
	if err := b.live(); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	return b.t.do(func() error {
		gl.MemoryBarrier(gl.BUFFER_UPDATE_BARRIER_BIT)
		gl.BindBuffer(gl.COPY_READ_BUFFER, b.id)
		gl.GetBufferSubData(gl.COPY_READ_BUFFER, int(off), len(dst), glPtr(&dst[0]))
		return nil
	})
}

// Memset sets n bytes from off to v.
func (b *glBuffer) Memset(off, n uint64, v byte) error {
	if err := b.live(); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	return b.t.do(func() error {
		gl.MemoryBarrier(gl.BUFFER_UPDATE_BARRIER_BIT)
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, b.id)
		gl.ClearBufferSubData(gl.COPY_WRITE_BUFFER, gl.R8UI, int(off), int(n), gl.RED_INTEGER, gl.UNSIGNED_BYTE, glPtr(&v))
		return nil
	})
}

// copyFrom copies n bytes of src at srcOff to b at dstOff on the device.
func (b *glBuffer) copyFrom(dstOff uint64, src *glBuffer, srcOff, n uint64) error {
	if err := errors.Join(b.live(), src.live()); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	return b.t.do(func() error {
		gl.MemoryBarrier(gl.BUFFER_UPDATE_BARRIER_BIT)
		gl.BindBuffer(gl.COPY_READ_BUFFER, src.id)
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, b.id)
		gl.CopyBufferSubData(gl.COPY_READ_BUFFER, gl.COPY_WRITE_BUFFER, int(srcOff), int(dstOff), int(n))
		return nil
	})
}

// Destroy deletes the buffer; later uses are errors. A second call does nothing.
func (b *glBuffer) Destroy() {
	b.mu.Lock()
	if b.deleted {
		b.mu.Unlock()
		return
	}
	b.deleted = true
	b.mu.Unlock()
	_ = b.t.do(func() error {
		gl.DeleteBuffers(1, &b.id)
		return nil
	})
}
