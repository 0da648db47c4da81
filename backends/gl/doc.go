// Package gl is tandem's OpenGL 4.3 compute backend: core.Device, core.BufferType, core.Buffer
// and core.Backend over a headless OpenGL context (EGL, surfaceless: no X server, no window),
// running the GLSL compute sources of package shaders compiled at run time.
//
// It is opt-in: only a build with the tag gl (and cgo) links libGL and libEGL,
//
//	go test -tags gl ./backends/gl ./tests
//	go run -tags gl ./bench
//
// so the default build never needs them. Without the tag (or without cgo) the package is a stub
// whose Available says why and whose New returns an error.
//
//	ok, why := gl.Available()
//	be, err := gl.New(0)    // backend on device 0, "GL0"
//	defer be.Close()
//
// The device "GL0" is registered with core when an EGL display gives an OpenGL 4.3 core context.
// Mesa's software rasterizer (llvmpipe) reports core.DeviceAccel, as lavapipe does in package
// vulkan, so core.InitBest never prefers it over the CPU backend.
//
// One OS thread per device owns the context; every GL call is handed to it. Buffers are shader
// storage buffers; a graph runs as one dispatch per node, with a glMemoryBarrier only before a
// node that touches what an earlier unsynchronized node wrote, and a fence at the end. The op
// encoders are package vulkan's (same shaders, same parameter blocks), and so is everything above
// the GL calls (backends/internal/gpubackend: buffer bookkeeping, checks, errors, the graph
// walk); GL has no 16-bit
// storage, so the translated shaders read and write 16-bit data as halves of 32-bit words.
//
// Environment: TANDEM_GL_DEBUG=1 creates a debug context (KHR_debug): any message of type error,
// undefined or deprecated behaviour becomes the error of the call that caused it (the tests set
// it). TANDEM_GL_DISABLE=1 hides the device. TANDEM_GPU_KERNELS=gpu makes a software device
// (llvmpipe) encode with the kernels for GPUs (MUL_MAT's mat-vec kernel and tiles), =cpu any
// device with those for software devices, as in package vulkan.
package gl
