package core

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Registration is what a backend package hands to Register: a name and a function listing its
// devices (called lazily, once per Devices call, so discovery errors surface as "no devices").
type Registration struct {
	Name    string
	Devices func() []Device
}

var registry struct {
	mu   sync.Mutex
	regs []Registration
}

// Register makes a backend's devices visible to Devices. Backend packages call it from init, so
// importing a backend package (even as import _ "github.com/tandem-ml/tandem/backends/vulkan") is
// what makes its devices available. Like database/sql.Register it panics when r.Devices is nil or
// when a backend of the same name is already registered: both are programming errors in a backend
// package, not user input.
func Register(r Registration) {
	if r.Devices == nil {
		panic("tandem: Register: backend " + r.Name + " has no Devices function")
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for _, old := range registry.regs {
		if old.Name == r.Name {
			panic("tandem: Register called twice for backend " + r.Name)
		}
	}
	registry.regs = append(registry.regs, r)
}

// unregister removes a registration (tests only).
func unregister(name string) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for i, old := range registry.regs {
		if old.Name == name {
			registry.regs = append(registry.regs[:i], registry.regs[i+1:]...)
			return
		}
	}
}

// Registrations lists the registered backend names.
func Registrations() []string {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	names := make([]string, len(registry.regs))
	for i, r := range registry.regs {
		names[i] = r.Name
	}
	return names
}

func deviceRank(t DeviceType) int {
	switch t {
	case DeviceGPU:
		return 0
	case DeviceIGPU:
		return 1
	case DeviceAccel:
		return 2
	}
	return 3
}

// Devices lists every registered device: GPUs first, then integrated GPUs, accelerators, and CPUs
// last; registration order within each kind.
func Devices() []Device {
	registry.mu.Lock()
	regs := append([]Registration(nil), registry.regs...)
	registry.mu.Unlock()
	var devs []Device
	for _, r := range regs {
		devs = r.appendDevices(devs)
	}
	sort.SliceStable(devs, func(i, j int) bool { return deviceRank(devs[i].Type()) < deviceRank(devs[j].Type()) })
	return devs
}

// RegisteredDevices lists the devices of the backend registered as name (case-insensitively),
// enumerating no other backend: a program that needs only the CPU ("CPU") opens no GPU driver
// this way. It returns nil when no backend of that name is registered.
func RegisteredDevices(name string) []Device {
	registry.mu.Lock()
	var reg *Registration
	for i := range registry.regs {
		if strings.EqualFold(registry.regs[i].Name, name) {
			r := registry.regs[i]
			reg = &r
			break
		}
	}
	registry.mu.Unlock()
	if reg == nil {
		return nil
	}
	return reg.appendDevices(nil)
}

// appendDevices appends r's devices to devs, skipping nil ones (rather than crashing the callers'
// sorts).
func (r *Registration) appendDevices(devs []Device) []Device {
	if r.Devices == nil {
		return devs
	}
	for _, d := range r.Devices() {
		if d != nil {
			devs = append(devs, d)
		}
	}
	return devs
}

// DeviceByName finds a device by name, case-insensitively.
func DeviceByName(name string) (Device, error) {
	for _, d := range Devices() {
		if strings.EqualFold(d.Name(), name) {
			return d, nil
		}
	}
	return nil, fmt.Errorf("tandem: no device named %q", name)
}

// DeviceByType returns the first device of type t.
func DeviceByType(t DeviceType) (Device, error) {
	for _, d := range Devices() {
		if d.Type() == t {
			return d, nil
		}
	}
	return nil, fmt.Errorf("tandem: no %v device", t)
}

// InitBest creates a backend on the best registered device: the first GPU, else the first
// integrated GPU, else the CPU. Accelerators are never chosen: software GPUs such as Mesa's
// lavapipe register as DeviceAccel because they run on the same CPU cores and lose to the CPU
// backend. Only devices of imported backend packages are registered; with none imported InitBest
// returns an error saying which packages to import.
func InitBest() (Backend, error) {
	for _, t := range []DeviceType{DeviceGPU, DeviceIGPU, DeviceCPU} {
		if d, err := DeviceByType(t); err == nil {
			return d.NewBackend()
		}
	}
	if len(Registrations()) == 0 {
		return nil, fmt.Errorf("tandem: no devices registered: import a backend package, e.g. _ \"github.com/tandem-ml/tandem/backends/cpu\" (and backends/vulkan for GPUs)")
	}
	return nil, fmt.Errorf("tandem: no GPU or CPU device among the registered backends %v: import _ \"github.com/tandem-ml/tandem/backends/cpu\" for the CPU", Registrations())
}
