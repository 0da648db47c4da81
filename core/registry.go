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

// Register makes a backend's devices visible to Devices. Backend packages call it from init; a
// second registration with the same name replaces the first.
func Register(r Registration) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for i, old := range registry.regs {
		if old.Name == r.Name {
			registry.regs[i] = r
			return
		}
	}
	registry.regs = append(registry.regs, r)
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
		if r.Devices != nil {
			for _, d := range r.Devices() {
				if d != nil { // a nil device is skipped rather than crashing the sort
					devs = append(devs, d)
				}
			}
		}
	}
	sort.SliceStable(devs, func(i, j int) bool { return deviceRank(devs[i].Type()) < deviceRank(devs[j].Type()) })
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

// InitBest creates a backend on the best device: the first GPU, else integrated GPU, else CPU.
func InitBest() (Backend, error) {
	for _, t := range []DeviceType{DeviceGPU, DeviceIGPU, DeviceCPU} {
		if d, err := DeviceByType(t); err == nil {
			return d.NewBackend()
		}
	}
	return nil, fmt.Errorf("tandem: no devices registered")
}
