// Package gpuops holds the compute-shader op encoders that the Vulkan and OpenGL backends share:
// which ops a device runs (Supports), and for each node the shader variant, its specialization
// constants, push constants, bound tensors and workgroup counts, the barriers between dependent
// dispatches and the device-side index checks of GET_ROWS and SET_ROWS.
//
// It is written once against Runtime, the little a backend provides: where a tensor's bytes live,
// a cached pipeline (or GL program) per shader variant, a dispatch, a barrier, a small status
// buffer and a device scratch buffer (sized by Encoder.Start for the graph before it is recorded:
// scratch.go). The shaders are those of package shaders (SPIR-V for Vulkan, translated to GLSL by the
// OpenGL backend); the device's limits come in a Device.
package gpuops
