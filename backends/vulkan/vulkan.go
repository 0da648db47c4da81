//go:build cgo && !novulkan

package vulkan

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/tandem-ml/tandem/backends/vulkan/internal/vkrt"
	"github.com/tandem-ml/tandem/core"
)

// ErrUnavailable is wrapped by the errors New returns when Vulkan cannot be used.
var ErrUnavailable = errors.New("tandem: vulkan: unavailable")

// The process-wide Vulkan state: one instance, the visible devices (each opens
// its logical device on first use). Shutdown tears it down; the next use
// starts over.
var state struct {
	mu      sync.Mutex
	inited  bool
	inst    *vkrt.Instance
	devices []*device
	err     error  // why Vulkan is unusable
	why     string // why no device is usable (when devices is empty)
}

func init() {
	core.Register(core.Registration{Name: "Vulkan", Devices: Devices})
}

// initState creates the instance and the device list once; state.mu is held.
func initState() {
	if state.inited {
		return
	}
	state.inited = true
	inst, err := vkrt.NewInstance(vkrt.InstanceOptions{
		Validate:       vkrt.ValidateFromEnv(),
		SyncValidation: true,
	})
	if err != nil {
		state.err = err
		return
	}
	state.inst = inst
	infos, why := visible(inst.Devices())
	for i, info := range infos {
		state.devices = append(state.devices, newDevice(inst, i, info))
	}
	state.why = why
}

// typeRank orders devices: discrete, integrated, virtual, other, CPU.
func typeRank(t vkrt.DeviceType) int {
	switch t {
	case vkrt.DeviceTypeDiscreteGPU:
		return 0
	case vkrt.DeviceTypeIntegratedGPU:
		return 1
	case vkrt.DeviceTypeVirtualGPU:
		return 2
	case vkrt.DeviceTypeOther:
		return 3
	}
	return 4
}

// visible returns the usable devices in order, and a description of the
// unusable ones.
func visible(all []*vkrt.DeviceInfo) ([]*vkrt.DeviceInfo, string) {
	var out []*vkrt.DeviceInfo
	var skipped []string
	if env := os.Getenv("TANDEM_VK_VISIBLE_DEVICES"); env != "" {
		for _, f := range strings.Split(env, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || i < 0 || i >= len(all) {
				skipped = append(skipped, fmt.Sprintf("TANDEM_VK_VISIBLE_DEVICES entry %q: no such device", f))
				continue
			}
			if err := all[i].Usable(); err != nil {
				skipped = append(skipped, err.Error())
				continue
			}
			out = append(out, all[i])
		}
	} else {
		for _, info := range all {
			if err := info.Usable(); err != nil {
				skipped = append(skipped, err.Error())
				continue
			}
			out = append(out, info)
		}
		sort.SliceStable(out, func(i, j int) bool { return typeRank(out[i].Type) < typeRank(out[j].Type) })
	}
	why := fmt.Sprintf("%d Vulkan physical devices", len(all))
	if len(skipped) > 0 {
		why += ": " + strings.Join(skipped, "; ")
	}
	return out, why
}

// Available reports whether a usable Vulkan device exists, and if not, why.
func Available() (bool, string) {
	state.mu.Lock()
	defer state.mu.Unlock()
	initState()
	switch {
	case state.err != nil:
		return false, strings.TrimPrefix(newUnavailable(state.err).Error(), "tandem: vulkan: unavailable: ")
	case len(state.devices) == 0:
		return false, "no usable Vulkan device (" + state.why + ")"
	}
	return true, ""
}

// DeviceCount returns the number of usable Vulkan devices.
func DeviceCount() int {
	state.mu.Lock()
	defer state.mu.Unlock()
	initState()
	return len(state.devices)
}

// Devices returns the usable Vulkan devices ("Vulkan0", ...), as registered
// with core.
func Devices() []core.Device {
	state.mu.Lock()
	defer state.mu.Unlock()
	initState()
	out := make([]core.Device, len(state.devices))
	for i, d := range state.devices {
		out[i] = d
	}
	return out
}

func deviceAt(i int) (*device, error) {
	state.mu.Lock()
	defer state.mu.Unlock()
	initState()
	if state.err != nil {
		return nil, newUnavailable(state.err)
	}
	if i < 0 || i >= len(state.devices) {
		return nil, fmt.Errorf("%w: no Vulkan device %d (%d usable; %s)", ErrUnavailable, i, len(state.devices), state.why)
	}
	return state.devices[i], nil
}

// ValidationMessages returns the warnings and errors the validation layer
// reported so far (TANDEM_VK_VALIDATE=1), including those of Shutdown.
func ValidationMessages() []string {
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.inst == nil {
		return lastMessages
	}
	return append(append([]string(nil), lastMessages...), state.inst.ValidationMessages()...)
}

// lastMessages keeps the messages of instances already shut down.
var lastMessages []string

// Shutdown closes every logical device (buffers and backends on them become
// unusable) and the instance. The next call into the package starts over.
// Tests use it to check, with validation on, that nothing leaked. It is safe to
// call concurrently with any other function of the package (it takes the
// package lock, then each device's lock; nothing takes them the other way).
func Shutdown() error {
	state.mu.Lock()
	defer state.mu.Unlock()
	var errs []error
	for _, d := range state.devices {
		errs = append(errs, d.close())
	}
	if state.inst != nil {
		errs = append(errs, state.inst.Close())
		lastMessages = append(lastMessages, state.inst.ValidationMessages()...)
	}
	state.inited, state.inst, state.devices, state.err, state.why = false, nil, nil, nil, ""
	return errors.Join(errs...)
}
