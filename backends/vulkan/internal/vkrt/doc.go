// Package vkrt is tandem's low-level Vulkan runtime: loader, instance (with
// optional validation), physical-device queries, a logical device with one
// compute queue, buffers (mapped or staged), compute pipelines with a cache,
// descriptor sets, command recording, submission and fences.
//
// It knows nothing about tensors; package backends/vulkan builds on it.
//
// Object creation goes through github.com/vulkan-go/vulkan (Vulkan 1.0); Vulkan
// 1.1+ queries, the debug messenger and the per-dispatch hot path go through a
// small C file (capi.h) that loads its functions with vkGetInstanceProcAddr /
// vkGetDeviceProcAddr. The loader is libvulkan.so.1, opened with dlopen, so no
// Vulkan development package is needed at build or run time.
//
// The package compiles to a stub (Supported reports false) without cgo or with
// the build tag novulkan.
//
// Typical use:
//
//	inst, err := vkrt.NewInstance(vkrt.InstanceOptions{Validate: vkrt.ValidateFromEnv()})
//	dev, err := inst.NewDevice(0, vkrt.DeviceOptions{})
//	buf, err := dev.NewBuffer(n, vkrt.DeviceBuffer)
//	err = buf.Write(0, data)
//	p, err := dev.Pipeline(vkrt.PipelineDesc{Name: "add_f32", SPIRV: spv, Bindings: 3, PushSize: 96})
//	err = dev.Run(func(c *vkrt.Commands) error {
//		return c.Dispatch(p, [3]uint32{groups, 1, 1}, push, vkrt.Bind(a), vkrt.Bind(b), vkrt.Bind(d))
//	})
//	err = buf.Read(0, out)
//	dev.Close(); inst.Close()
package vkrt
