//go:build cgo && !novulkan

package vkrt

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	vk "github.com/vulkan-go/vulkan"
)

// Supported reports whether this build includes the Vulkan runtime (it does; it
// may still find no loader or device at run time: see Load and NewInstance).
func Supported() (bool, string) { return true, "" }

const (
	validationLayer   = "VK_LAYER_KHRONOS_validation"
	extDebugUtils     = "VK_EXT_debug_utils"
	extValidationFeat = "VK_EXT_validation_features"
)

var (
	loadOnce sync.Once
	loadErr  error

	// instMu serializes instance creation and destruction: vulkan-go keeps its
	// function pointers in process-wide variables set by vk.InitInstance.
	instMu sync.Mutex

	nextOwner atomic.Uint64
)

// LoaderEnv names the environment variable that overrides the Vulkan loader
// library (default libvulkan.so.1, then libvulkan.so).
const LoaderEnv = "TANDEM_VK_LOADER"

// Load opens the Vulkan loader once per process and hands its
// vkGetInstanceProcAddr to vulkan-go. It returns the same error on every call
// when the loader cannot be used.
func Load() error {
	loadOnce.Do(func() {
		if err := cLoad(os.Getenv(LoaderEnv)); err != nil {
			loadErr = fmt.Errorf("vulkan: %w", err)
			return
		}
		vk.SetGetInstanceProcAddr(cGipa())
		if err := vk.Init(); err != nil {
			loadErr = fmt.Errorf("vulkan: initializing vulkan-go: %w", err)
		}
	})
	return loadErr
}

// ValidateFromEnv reports whether TANDEM_VK_VALIDATE asks for validation
// (any value except "" and "0").
func ValidateFromEnv() bool {
	v := os.Getenv("TANDEM_VK_VALIDATE")
	return v != "" && v != "0"
}

// InstanceOptions configure NewInstance.
type InstanceOptions struct {
	AppName string // application name reported to the driver (default "tandem")

	// Validate enables VK_LAYER_KHRONOS_validation with a VK_EXT_debug_utils
	// messenger: every message of severity warning or error is recorded and
	// returned by ValidationMessages. NewInstance fails when the layer or the
	// extension is missing.
	Validate bool

	// SyncValidation additionally enables the layer's synchronization
	// validation (missing barriers), when VK_EXT_validation_features exists.
	SyncValidation bool
}

// Instance is a Vulkan instance and the physical devices it found.
type Instance struct {
	inst       vk.Instance
	apiVersion uint32
	owner      uint64
	messenger  uint64
	validate   bool
	phys       []vk.PhysicalDevice
	infos      []*DeviceInfo

	mu      sync.Mutex
	msgs    []string
	devices map[*Device]struct{}
	closed  bool
}

// NewInstance loads Vulkan and creates an instance (API version up to 1.3,
// at least 1.1) and enumerates its physical devices.
func NewInstance(opts InstanceOptions) (*Instance, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	loaderVersion := cInstanceVersion()
	if loaderVersion < vk.MakeVersion(1, 1, 0) {
		return nil, fmt.Errorf("vulkan: loader supports Vulkan %s, need 1.1: %w", versionString(loaderVersion), ErrUnsupportedDevice)
	}
	apiVersion := min(loaderVersion&^0xFFF, vk.MakeVersion(1, 3, 0))
	if opts.AppName == "" {
		opts.AppName = "tandem"
	}

	in := &Instance{
		apiVersion: apiVersion,
		owner:      nextOwner.Add(1),
		validate:   opts.Validate,
		devices:    map[*Device]struct{}{},
	}
	var layers, exts []string
	chainFree := func() {}
	ci := &vk.InstanceCreateInfo{SType: vk.StructureTypeInstanceCreateInfo}
	if opts.Validate {
		if !slices.Contains(instanceLayers(), validationLayer) {
			return nil, fmt.Errorf("vulkan: validation requested but %s is not installed: %w", validationLayer, ErrLayerNotPresent)
		}
		if !slices.Contains(instanceExtensions(""), extDebugUtils) {
			return nil, fmt.Errorf("vulkan: validation requested but %s is missing: %w", extDebugUtils, ErrExtensionNotFound)
		}
		layers = append(layers, validationLayer+"\x00") // constants: static, NUL-terminated
		exts = append(exts, extDebugUtils+"\x00")
		syncval := opts.SyncValidation && slices.Contains(instanceExtensions(validationLayer), extValidationFeat)
		if syncval {
			exts = append(exts, extValidationFeat+"\x00")
		}
		// The chain lives in C memory: messages of vkCreateInstance and
		// vkDestroyInstance reach the instance's queue too.
		ci.PNext, chainFree = cInstanceChain(in.owner, syncval)
	}

	app := &vk.ApplicationInfo{
		SType:              vk.StructureTypeApplicationInfo,
		PApplicationName:   opts.AppName + "\x00",
		ApplicationVersion: 1,
		PEngineName:        "tandem\x00",
		EngineVersion:      1,
		ApiVersion:         apiVersion,
	}
	ci.PApplicationInfo = app
	ci.EnabledLayerCount = uint32(len(layers))
	ci.PpEnabledLayerNames = layers
	ci.EnabledExtensionCount = uint32(len(exts))
	ci.PpEnabledExtensionNames = exts

	instMu.Lock()
	defer instMu.Unlock()
	var inst vk.Instance
	r := vk.CreateInstance(ci, nil, &inst)
	ci.Free()
	app.Free()
	chainFree()
	if err := resultError("vkCreateInstance", int32(r)); err != nil {
		return nil, err
	}
	in.inst = inst
	if err := vk.InitInstance(inst); err != nil {
		vk.DestroyInstance(inst, nil)
		return nil, fmt.Errorf("vulkan: vk.InitInstance: %w", err)
	}
	if opts.Validate {
		m, err := cDebugCreate(inst, in.owner)
		if err != nil {
			vk.DestroyInstance(inst, nil)
			return nil, err
		}
		in.messenger = m
	}

	var n uint32
	if err := resultError("vkEnumeratePhysicalDevices", int32(vk.EnumeratePhysicalDevices(inst, &n, nil))); err != nil {
		in.destroyLocked()
		return nil, err
	}
	if n > 0 {
		in.phys = make([]vk.PhysicalDevice, n)
		if err := resultError("vkEnumeratePhysicalDevices", int32(vk.EnumeratePhysicalDevices(inst, &n, in.phys))); err != nil {
			in.destroyLocked()
			return nil, err
		}
		in.phys = in.phys[:n]
	}
	for i, pd := range in.phys {
		in.infos = append(in.infos, queryDevice(inst, pd, i))
	}
	return in, nil
}

// APIVersion returns the Vulkan version the instance was created with.
func (in *Instance) APIVersion() uint32 { return in.apiVersion }

// Validating reports whether the validation layer is enabled.
func (in *Instance) Validating() bool { return in.validate }

// Devices returns the physical devices in the order the loader lists them.
func (in *Instance) Devices() []*DeviceInfo { return slices.Clone(in.infos) }

// ValidationMessages returns every warning and error the validation layer (and
// loader) reported for this instance so far, including during Close.
func (in *Instance) ValidationMessages() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.msgs = append(in.msgs, cTakeMessages(in.owner)...)
	return slices.Clone(in.msgs)
}

// Close closes every device still open and destroys the instance.
func (in *Instance) Close() error {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return nil
	}
	in.closed = true
	devs := make([]*Device, 0, len(in.devices))
	for d := range in.devices {
		devs = append(devs, d)
	}
	in.mu.Unlock()
	var firstErr error
	for _, d := range devs {
		if err := d.Close(); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	instMu.Lock()
	in.destroyLocked()
	instMu.Unlock()
	in.ValidationMessages() // drain what destruction reported
	return firstErr
}

func (in *Instance) destroyLocked() {
	if in.messenger != 0 {
		cDebugDestroy(in.inst, in.messenger)
		in.messenger = 0
	}
	vk.DestroyInstance(in.inst, nil)
}

func instanceLayers() []string {
	var n uint32
	if vk.EnumerateInstanceLayerProperties(&n, nil) != vk.Success || n == 0 {
		return nil
	}
	props := make([]vk.LayerProperties, n)
	if vk.EnumerateInstanceLayerProperties(&n, props) != vk.Success {
		return nil
	}
	var names []string
	for i := range props[:n] {
		props[i].Deref()
		names = append(names, cstr(props[i].LayerName[:]))
	}
	return names
}

func instanceExtensions(layer string) []string {
	var n uint32
	name := ""
	if layer != "" {
		name = layer + "\x00"
	}
	if vk.EnumerateInstanceExtensionProperties(name, &n, nil) != vk.Success || n == 0 {
		return nil
	}
	props := make([]vk.ExtensionProperties, n)
	if vk.EnumerateInstanceExtensionProperties(name, &n, props) != vk.Success {
		return nil
	}
	var names []string
	for i := range props[:n] {
		props[i].Deref()
		names = append(names, cstr(props[i].ExtensionName[:]))
	}
	return names
}

// cstr returns the NUL-terminated string at the start of b.
func cstr(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\x00")
	return s
}

func versionString(v uint32) string {
	return fmt.Sprintf("%d.%d.%d", (v>>22)&0x7F, (v>>12)&0x3FF, v&0xFFF)
}
