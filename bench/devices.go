package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/backends/gl"
	"github.com/tandem-ml/tandem/backends/rpc"
	"github.com/tandem-ml/tandem/backends/vulkan"
	"github.com/tandem-ml/tandem/core"
)

// TargetKind says what runs a case.
type TargetKind int

const (
	KindCPU    TargetKind = iota // the CPU backend with some thread count
	KindDevice                   // another device's backend alone (Vulkan)
	KindSched                    // the scheduler over a device's backend and the CPU
)

// Target is one row per case in the table: a device (or the scheduler over two) that runs cases.
type Target struct {
	Name     string // "CPU", "CPU·1t", "Vulkan0", "Vulkan0+CPU"
	Kind     TargetKind
	Dev      core.Device  // the device that runs the case (the Vulkan one for KindSched)
	Threads  int          // CPU threads (KindCPU; the CPU part of KindSched)
	Baseline bool         // the CPU target others are compared with
	Hidden   bool         // the baseline computes references but is not shown (-devices without cpu)
	Desc     string       // one line about the device
	Backend  core.Backend // created lazily, closed by closeTargets
	CPU      core.Backend // KindSched: its CPU backend
}

// DeviceInfo is a device as reported in the header and in JSON.
type DeviceInfo struct {
	Name        string            `json:"name"`
	Type        string            `json:"type"`
	Description string            `json:"description"`
	MemoryMiB   int64             `json:"memory_mib,omitempty"`
	Features    map[string]string `json:"features,omitempty"`
	Software    bool              `json:"software,omitempty"` // a GPU API running on the CPU's cores
}

// softwareDrivers are GPU drivers that run on the CPU; a device of theirs competes with the CPU
// backend for the same cores, so its times say nothing about GPUs.
var softwareDrivers = []string{"llvmpipe", "lavapipe", "swiftshader", "softpipe"}

// isSoftware reports whether a non-CPU device is a software implementation.
func isSoftware(info DeviceInfo) bool {
	if info.Type == core.DeviceCPU.String() {
		return false
	}
	text := strings.ToLower(info.Description + " " + info.Features["DRIVER"])
	for _, d := range softwareDrivers {
		if strings.Contains(text, d) {
			return true
		}
	}
	return false
}

func describe(d core.Device) DeviceInfo {
	_, total := d.Memory()
	info := DeviceInfo{Name: d.Name(), Type: d.Type().String(), Description: d.Description(), MemoryMiB: total >> 20}
	if fl, ok := d.(core.FeatureLister); ok {
		info.Features = map[string]string{}
		for _, f := range fl.Features() {
			info.Features[f.Name] = f.Value
		}
	}
	info.Software = isSoftware(info)
	return info
}

// matchDevice reports whether a -devices term selects a device: its name ("cpu", "vulkan0"), its
// type ("gpu", "accel", "cpu") or a name prefix ("vulkan").
func matchDevice(term, name, typ string) bool {
	term = strings.ToLower(strings.TrimSpace(term))
	name, typ = strings.ToLower(name), strings.ToLower(typ)
	return term != "" && (term == name || term == typ || strings.HasPrefix(name, term))
}

func selectedDevice(terms []string, d core.Device) bool {
	if len(terms) == 0 {
		return true
	}
	for _, t := range terms {
		if matchDevice(t, d.Name(), d.Type().String()) {
			return true
		}
	}
	return false
}

// Discovery is what device discovery found.
type Discovery struct {
	Devices   []DeviceInfo // every device found (selected or not)
	Targets   []*Target    // what runs, the baseline first
	VulkanOK  bool
	VulkanWhy string       // why Vulkan is not used, when it is not
	GLOK      bool         // the OpenGL backend (build tag gl) found its device GL0
	GLWhy     string       // why OpenGL is not used, when it is not
	RPC       *rpc.Client  // -rpc: the connection to the remote server (closed by the app)
	Model     *modelSource // -model: the language model of the model families (nil: none)
}

// Discover lists devices and makes the targets the config selects. The CPU baseline is always the
// first target (hidden when -devices leaves the CPU out: it still computes the references).
func Discover(cfg *Config) (*Discovery, error) {
	d := &Discovery{}
	d.VulkanOK, d.VulkanWhy = vulkan.Available()
	d.GLOK, d.GLWhy = gl.Available()
	var cpuDev core.Device
	var others []core.Device
	for _, dev := range core.Devices() {
		d.Devices = append(d.Devices, describe(dev))
		if dev.Type() == core.DeviceCPU {
			if cpuDev == nil {
				cpuDev = dev
			}
			continue
		}
		others = append(others, dev)
	}
	if cpuDev == nil {
		return nil, errors.New("no CPU device registered (is backends/cpu imported?)")
	}
	if cfg.RPC != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := rpc.Dial(ctx, cfg.RPC)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("-rpc: %w", err)
		}
		d.RPC = c
		for _, dev := range c.Devices() {
			d.Devices = append(d.Devices, describe(dev))
			others = append(others, dev)
		}
	}
	cpuSelected := selectedDevice(cfg.Devices, cpuDev)
	for i, n := range cfg.Threads {
		name := "CPU"
		if len(cfg.Threads) > 1 {
			name = fmt.Sprintf("CPU·%dt", n)
		}
		t := &Target{Name: name, Kind: KindCPU, Dev: cpuDev, Threads: n, Baseline: i == 0,
			Desc: fmt.Sprintf("%s, %d threads", cpuDev.Description(), n)}
		if !cpuSelected {
			if i > 0 {
				break
			}
			t.Hidden = true
		}
		d.Targets = append(d.Targets, t)
	}
	var scheds []*Target
	for _, dev := range others {
		if !selectedDevice(cfg.Devices, dev) {
			continue
		}
		d.Targets = append(d.Targets, &Target{Name: dev.Name(), Kind: KindDevice, Dev: dev, Desc: dev.Description()})
		scheds = append(scheds, &Target{Name: dev.Name() + "+CPU", Kind: KindSched, Dev: dev, Threads: cfg.Threads[0],
			Desc: "scheduler: " + dev.Name() + " first, CPU last"})
	}
	d.Targets = append(d.Targets, scheds...)
	if len(cfg.Devices) > 0 {
		n := 0
		for _, t := range d.Targets {
			if !t.Hidden {
				n++
			}
		}
		if n == 0 {
			return d, fmt.Errorf("-devices %s matches no device (found: %s)", strings.Join(cfg.Devices, ","), deviceNames(d.Devices))
		}
	}
	return d, nil
}

func deviceNames(ds []DeviceInfo) string {
	var s []string
	for _, d := range ds {
		s = append(s, d.Name+" ("+d.Type+")")
	}
	return strings.Join(s, ", ")
}

// open creates the target's backend(s) on first use; those that take a logger (core.LoggerSetter:
// the CPU, Vulkan and OpenGL backends) get log (nil: none).
func (t *Target) open(log *slog.Logger) error {
	if t.Backend != nil {
		return nil
	}
	defer func() {
		if log == nil {
			return
		}
		for _, be := range []core.Backend{t.Backend, t.CPU} {
			if ls, ok := be.(core.LoggerSetter); ok && be != nil {
				ls.SetLogger(log)
			}
		}
	}()
	switch t.Kind {
	case KindCPU:
		be, err := cpu.New(cpu.Options{Threads: t.Threads})
		if err != nil {
			return err
		}
		t.Backend = be
	case KindDevice:
		be, err := t.Dev.NewBackend()
		if err != nil {
			return err
		}
		t.Backend = be
	case KindSched:
		be, err := t.Dev.NewBackend()
		if err != nil {
			return err
		}
		cb, err := cpu.New(cpu.Options{Threads: t.Threads})
		if err != nil {
			be.Close()
			return err
		}
		t.Backend, t.CPU = be, cb
	}
	return nil
}

func closeTargets(ts []*Target) error {
	var errs []error
	for _, t := range ts {
		if t.Backend != nil {
			errs = append(errs, t.Backend.Close())
			t.Backend = nil
		}
		if t.CPU != nil {
			errs = append(errs, t.CPU.Close())
			t.CPU = nil
		}
	}
	return errors.Join(errs...)
}
