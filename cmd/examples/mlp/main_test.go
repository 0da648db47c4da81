package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/vulkan"
)

// The example with fewer epochs: it learns the spiral, and with a Vulkan device the first layer
// runs there, the step split across the two devices.
func TestMLP(t *testing.T) {
	var out bytes.Buffer
	res, err := run(&out, config{Epochs: 30, Hidden: 32, PerClass: 100})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	if res.TrainAcc < 0.9 || !(res.LastLoss < res.FirstLoss/2) {
		t.Errorf("training accuracy %.3f, loss %.4g → %.4g: the spiral was not learned", res.TrainAcc, res.FirstLoss, res.LastLoss)
	}
	if ok, _ := vulkan.Available(); ok {
		if !strings.HasPrefix(res.Devices[0], "Vulkan") || res.Splits < 2 {
			t.Errorf("with Vulkan: layer 1 on %s, %d splits; want it on Vulkan and the step split", res.Devices[0], res.Splits)
		}
	} else if res.Devices[0] != res.Devices[1] || !strings.Contains(out.String(), "both layers on the CPU") {
		t.Errorf("without Vulkan: layers on %v; want the CPU alone, said", res.Devices)
	}
	if !strings.Contains(out.String(), "final accuracy") {
		t.Errorf("output lacks the final accuracy:\n%s", out.String())
	}
}

// -cpu keeps both layers on the CPU: one split.
func TestMLPCPUOnly(t *testing.T) {
	var out bytes.Buffer
	res, err := run(&out, config{Epochs: 5, Hidden: 16, PerClass: 50, CPUOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Devices[0] != "CPU" || res.Devices[1] != "CPU" || res.Splits != 1 {
		t.Errorf("-cpu: layers on %v, %d splits; want the CPU alone, one split", res.Devices, res.Splits)
	}
	if !(res.LastLoss < res.FirstLoss) {
		t.Errorf("loss %.4g → %.4g did not fall", res.FirstLoss, res.LastLoss)
	}
}
