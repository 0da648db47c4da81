package core

import (
	"strings"
	"testing"
)

type fakeDevice struct {
	name string
	typ  DeviceType
}

func (d fakeDevice) Name() string                       { return d.name }
func (d fakeDevice) Description() string                { return "fake " + d.name }
func (d fakeDevice) Type() DeviceType                   { return d.typ }
func (d fakeDevice) Memory() (int64, int64)             { return 0, 0 }
func (d fakeDevice) SupportsOp(*Tensor) bool            { return true }
func (d fakeDevice) SupportsBufferType(BufferType) bool { return true }
func (d fakeDevice) OffloadOp(*Tensor) bool             { return false }
func (d fakeDevice) BufferType() BufferType             { return HostBufferType() }
func (d fakeDevice) NewBackend() (Backend, error) {
	return nil, errorfNoCtx("fake %s has no backend", d.name)
}

// The registry lists GPUs, integrated GPUs, accelerators, then CPUs (registration order within a
// kind), finds devices by name and type, and refuses a second registration of the same name.
func TestRegistry(t *testing.T) {
	// Start from an empty registry: the package's external examples import real backends.
	registry.mu.Lock()
	saved := registry.regs
	registry.regs = nil
	registry.mu.Unlock()
	defer func() {
		registry.mu.Lock()
		registry.regs = saved
		registry.mu.Unlock()
	}()
	Register(Registration{Name: "fakeCPU", Devices: func() []Device { return []Device{fakeDevice{"CPUx", DeviceCPU}} }})
	Register(Registration{Name: "fakeAccel", Devices: func() []Device { return []Device{fakeDevice{"Acc0", DeviceAccel}} }})
	Register(Registration{Name: "fakeGPU", Devices: func() []Device {
		return []Device{fakeDevice{"GPU0", DeviceGPU}, fakeDevice{"IGPU0", DeviceIGPU}, fakeDevice{"GPU1", DeviceGPU}}
	}})
	var names []string
	for _, d := range Devices() {
		names = append(names, d.Name())
	}
	if got := strings.Join(names, ","); got != "GPU0,GPU1,IGPU0,Acc0,CPUx" {
		t.Fatalf("device order %s", got)
	}
	if d, err := DeviceByName("gpu1"); err != nil || d.Name() != "GPU1" {
		t.Fatalf("DeviceByName: %v %v", d, err)
	}
	if _, err := DeviceByName("nope"); err == nil {
		t.Fatal("unknown device found")
	}
	if d, err := DeviceByType(DeviceAccel); err != nil || d.Name() != "Acc0" {
		t.Fatalf("DeviceByType: %v %v", d, err)
	}
	if _, err := InitBest(); err == nil || !strings.Contains(err.Error(), "GPU0") {
		t.Fatalf("InitBest must try the first GPU: %v", err)
	}
	// RegisteredDevices asks one registration only.
	accelAsked := 0
	Register(Registration{Name: "countingAccel", Devices: func() []Device {
		accelAsked++
		return []Device{nil, fakeDevice{"Acc1", DeviceAccel}}
	}})
	if got := RegisteredDevices("FAKEcpu"); len(got) != 1 || got[0].Name() != "CPUx" || accelAsked != 0 {
		t.Fatalf("RegisteredDevices(FAKEcpu) = %v, other registrations asked %d times", got, accelAsked)
	}
	if got := RegisteredDevices("countingAccel"); len(got) != 1 || got[0].Name() != "Acc1" || accelAsked != 1 {
		t.Fatalf("RegisteredDevices(countingAccel) = %v (asked %d times): want Acc1, the nil device dropped", got, accelAsked)
	}
	if got := RegisteredDevices("nope"); got != nil {
		t.Fatalf("RegisteredDevices of an unknown name = %v", got)
	}
	unregister("countingAccel")
	unregister("fakeGPU")
	Register(Registration{Name: "fakeGPU", Devices: func() []Device { return nil }})
	regs := strings.Join(Registrations(), ",")
	if regs != "fakeCPU,fakeAccel,fakeGPU" {
		t.Fatalf("registrations %s", regs)
	}
	if _, err := DeviceByType(DeviceGPU); err == nil {
		t.Fatal("a replaced registration still lists its devices")
	}
	if _, err := InitBest(); err == nil || !strings.Contains(err.Error(), "CPUx") {
		t.Fatalf("InitBest without GPUs must fall back to the CPU (accelerators are never preferred): %v", err)
	}
}

// Register panics on a duplicate name or a nil Devices function, as database/sql.Register does;
// InitBest with nothing registered names the packages to import.
func TestRegisterMisuse(t *testing.T) {
	mustPanic := func(what string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", what)
			}
		}()
		f()
	}
	Register(Registration{Name: "dupe", Devices: func() []Device { return nil }})
	defer unregister("dupe")
	mustPanic("duplicate Register", func() { Register(Registration{Name: "dupe", Devices: func() []Device { return nil }}) })
	mustPanic("Register with nil Devices", func() { Register(Registration{Name: "nodevs"}) })

	registry.mu.Lock()
	saved := registry.regs
	registry.regs = nil
	registry.mu.Unlock()
	_, err := InitBest()
	registry.mu.Lock()
	registry.regs = saved
	registry.mu.Unlock()
	if err == nil || !strings.Contains(err.Error(), "backends/cpu") {
		t.Errorf("InitBest with no registrations: %v, want a hint naming backends/cpu", err)
	}
}
