//go:build cgo && !novulkan

package vkrt

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
)

// Tests share one instance and device (creating them with validation costs
// ~100 ms). Environment:
//
//	TANDEM_VK_VALIDATE=1     validation layer (+ synchronization validation);
//	                         any warning or error fails the test that caused it
//	TANDEM_REQUIRE_VULKAN=1  fail instead of skip when no usable device exists
//	TANDEM_VK_DEVICE=i       use physical device i (default: first usable)

var fixture struct {
	once sync.Once
	inst *Instance
	dev  *Device
	err  error
}

func requireVulkan() bool { return os.Getenv("TANDEM_REQUIRE_VULKAN") == "1" }

func noDevice(t testing.TB, err error) {
	t.Helper()
	if requireVulkan() {
		t.Fatalf("TANDEM_REQUIRE_VULKAN=1 but no Vulkan device: %v", err)
	}
	t.Skipf("no Vulkan device: %v", err)
}

// pickDevice returns TANDEM_VK_DEVICE or the first usable device.
func pickDevice(in *Instance) (int, error) {
	if s := os.Getenv("TANDEM_VK_DEVICE"); s != "" {
		return strconv.Atoi(s)
	}
	var why []string
	for _, info := range in.Devices() {
		if err := info.Usable(); err != nil {
			why = append(why, err.Error())
			continue
		}
		return info.Index, nil
	}
	return -1, fmt.Errorf("%d physical devices, none usable %v: %w", len(in.Devices()), why, ErrNoDevice)
}

// instances are every instance the tests created through newInstance; TestMain fails the run on
// any validation message one of them received, unless a test marked it with expectValidation
// (the tests that provoke messages on purpose and assert them).
var instances struct {
	mu       sync.Mutex
	all      []*Instance
	expected map[*Instance]bool
}

func newInstance() (*Instance, error) {
	in, err := NewInstance(InstanceOptions{AppName: "tandem-vkrt-test", Validate: ValidateFromEnv(), SyncValidation: true})
	if err == nil {
		instances.mu.Lock()
		instances.all = append(instances.all, in)
		instances.mu.Unlock()
	}
	return in, err
}

// expectValidation marks in as an instance whose messages a test provoked and checks itself.
func expectValidation(in *Instance) {
	instances.mu.Lock()
	defer instances.mu.Unlock()
	if instances.expected == nil {
		instances.expected = map[*Instance]bool{}
	}
	instances.expected[in] = true
}

// openDevice creates an instance and a device with opts, for tests that need
// their own; both are closed at cleanup and validation messages checked.
func openDevice(t testing.TB, opts DeviceOptions) *Device {
	t.Helper()
	in, err := newInstance()
	if err != nil {
		noDevice(t, err)
	}
	idx, err := pickDevice(in)
	if err != nil {
		in.Close()
		noDevice(t, err)
	}
	d, err := in.NewDevice(idx, opts)
	if err != nil {
		in.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := in.Close(); err != nil {
			t.Error(err)
		}
		for _, m := range in.ValidationMessages() {
			t.Errorf("validation: %s", m)
		}
	})
	return d
}

// testDevice returns the shared device; validation messages that appear
// during the test fail it.
func testDevice(t testing.TB) *Device {
	t.Helper()
	fixture.once.Do(func() {
		in, err := newInstance()
		if err != nil {
			fixture.err = err
			return
		}
		idx, err := pickDevice(in)
		if err != nil {
			in.Close()
			fixture.err = err
			return
		}
		d, err := in.NewDevice(idx, DeviceOptions{})
		if err != nil {
			in.Close()
			fixture.err = err
			return
		}
		fixture.inst, fixture.dev = in, d
	})
	if fixture.err != nil {
		noDevice(t, fixture.err)
	}
	before := len(fixture.inst.ValidationMessages())
	t.Cleanup(func() {
		for _, m := range fixture.inst.ValidationMessages()[before:] {
			t.Errorf("validation: %s", m)
		}
	})
	return fixture.dev
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixture.inst != nil {
		n := len(fixture.inst.ValidationMessages())
		if err := fixture.inst.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "closing the test instance:", err)
			code = 1
		}
		// Leaks of child objects are reported when the device is destroyed.
		for _, msg := range fixture.inst.ValidationMessages()[n:] {
			fmt.Fprintln(os.Stderr, "validation at close:", msg)
			code = 1
		}
	}
	// Every message counts, whichever test raised it and whether or not it checked.
	total := 0
	for _, in := range instances.all {
		if instances.expected[in] {
			continue
		}
		if err := in.Close(); err != nil { // a no-op for closed ones; leaks show now
			fmt.Fprintln(os.Stderr, "closing a test instance:", err)
			code = 1
		}
		for _, msg := range in.ValidationMessages() {
			fmt.Fprintln(os.Stderr, "validation:", msg)
			total++
		}
	}
	if total > 0 {
		fmt.Fprintf(os.Stderr, "%d validation messages in all\n", total)
		code = 1
	}
	os.Exit(code)
}
