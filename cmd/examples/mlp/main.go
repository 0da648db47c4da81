// Command mlp trains a two-layer perceptron on cs231n's 3-class spiral with package opt, across two
// devices: the first layer's weights live on the GPU (Vulkan device 0) and the second layer's on
// the CPU, so the scheduler splits every training step — forward, backward and AdamW — between
// them and copies the activations across. Without a Vulkan device (no cgo, -tags novulkan, no
// loader or driver) both layers run on the CPU, and the program says so.
//
//	go run ./cmd/examples/mlp                      # 100 epochs, 300 samples
//	go run ./cmd/examples/mlp -epochs 20 -cpu      # the CPU alone
//
// It prints every tenth epoch's loss and accuracy, then where the layers ran, the scheduler's
// splits and the final training and validation accuracy.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/backends/vulkan"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/opt"
)

// config is what the flags set.
type config struct {
	Epochs, Hidden, PerClass int
	CPUOnly                  bool
}

// result is what a run reports (the test checks it).
type result struct {
	Devices             [2]string // where layer 1 and layer 2 live
	Splits              int
	TrainAcc, ValAcc    float64
	FirstLoss, LastLoss float64
}

func main() {
	var cfg config
	flag.IntVar(&cfg.Epochs, "epochs", 100, "training epochs")
	flag.IntVar(&cfg.Hidden, "hidden", 32, "hidden units")
	flag.IntVar(&cfg.PerClass, "n", 100, "samples per class (3 classes)")
	flag.BoolVar(&cfg.CPUOnly, "cpu", false, "run both layers on the CPU")
	flag.Parse()
	if _, err := run(os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "mlp:", err)
		os.Exit(1)
	}
}

// run trains the model and prints its progress to w.
func run(w io.Writer, cfg config) (result, error) {
	var res result
	cpuBe, err := cpu.New(cpu.Options{})
	if err != nil {
		return res, err
	}
	defer cpuBe.Close()
	gpu := core.Backend(cpuBe)
	backends := []core.Backend{cpuBe}
	if ok, why := vulkan.Available(); ok && !cfg.CPUOnly {
		vk, err := vulkan.New(0)
		if err != nil {
			return res, err
		}
		defer vk.Close()
		gpu, backends = vk, []core.Backend{vk, cpuBe} // priority order, CPU last
	} else if !cfg.CPUOnly {
		fmt.Fprintf(w, "no Vulkan device (%s): both layers on the CPU\n", why)
	}

	// Parameters: each layer's tensors in a NoAlloc context, placed in its device's memory and
	// marked as weights, so that the ops reading them run there.
	layer := func(be core.Backend, in, out int64, name string) (wt, b *core.Tensor, buf core.Buffer, err error) {
		c := core.NewContext(core.ContextParams{NoAlloc: true})
		wt = c.NewTensor2D(core.TypeF32, in, out).SetName(name + ".weight")
		b = c.NewTensor2D(core.TypeF32, out, 1).SetName(name + ".bias")
		if buf, err = alloc.AllocCtxTensors(c, be); err != nil {
			return nil, nil, nil, err
		}
		buf.SetUsage(core.BufferUsageWeights)
		r := rand.New(rand.NewPCG(uint64(in), uint64(out)))
		v := make([]float32, wt.NElements())
		for i := range v {
			v[i] = float32(r.NormFloat64() * math.Sqrt(2/float64(in)))
		}
		if err := core.SetFloat32s(wt, v); err != nil {
			return nil, nil, nil, err
		}
		return wt, b, buf, core.SetFloat32s(b, make([]float32, out))
	}
	w1, b1, buf1, err := layer(gpu, 2, int64(cfg.Hidden), "fc1")
	if err != nil {
		return res, err
	}
	defer buf1.Free()
	w2, b2, buf2, err := layer(cpuBe, int64(cfg.Hidden), 3, "fc2")
	if err != nil {
		return res, err
	}
	defer buf2.Free()
	res.Devices = [2]string{gpu.Name(), cpuBe.Name()}

	model := opt.Model{NIn: 2, NOut: 3, Params: []*core.Tensor{w1, b1, w2, b2},
		Build: func(c *core.Context, x *core.Tensor) *core.Tensor {
			h := c.Relu(c.Add(c.MulMat(w1, x), b1))
			return c.Add(c.MulMat(w2, h), b2)
		}}
	h := opt.DefaultHyper()
	h.Alpha = 0.02
	tr, err := opt.New(opt.Config{Backends: backends, Model: model, BatchSize: 30, Loss: opt.LossCrossEntropy, Hyper: h})
	if err != nil {
		return res, err
	}
	defer tr.Close()

	data, labels := spiral(cfg.PerClass, 1)
	ds, err := opt.NewDataset(data, 2, labels, 3)
	if err != nil {
		return res, err
	}
	epochs, err := tr.Fit(context.Background(), ds, opt.FitOptions{Epochs: cfg.Epochs, ValSplit: 0.1, Seed: 5})
	if err != nil {
		return res, err
	}
	for _, e := range epochs {
		if e.Epoch%10 == 0 || e.Epoch == 1 {
			fmt.Fprintf(w, "epoch %3d: train loss %v, accuracy %.3f; validation accuracy %.3f\n", e.Epoch, e.TrainLoss, e.TrainAcc.Value, e.ValAcc.Value)
		}
	}
	last := epochs[len(epochs)-1]
	res.Splits = tr.Splits()
	res.TrainAcc, res.ValAcc = last.TrainAcc.Value, last.ValAcc.Value
	res.FirstLoss, res.LastLoss = epochs[0].TrainLoss.Value, last.TrainLoss.Value
	fmt.Fprintf(w, "layer 1 on %s, layer 2 on %s: %d split(s) per step, %d optimizer steps, %d re-plans\n",
		res.Devices[0], res.Devices[1], res.Splits, tr.Steps(), tr.Replans())
	fmt.Fprintf(w, "final accuracy: training %.3f, validation %.3f\n", res.TrainAcc, res.ValAcc)
	return res, nil
}

// spiral makes n points per class of the 3-class spiral in 2-D, with one-hot labels.
func spiral(n int, seed uint64) (data, labels []float32) {
	r := rand.New(rand.NewPCG(seed, 7))
	for c := range 3 {
		for i := range n {
			t := float64(i) / float64(n)
			theta := float64(c)*4 + t*4 + r.NormFloat64()*0.2
			data = append(data, float32(t*math.Sin(theta)), float32(t*math.Cos(theta)))
			l := []float32{0, 0, 0}
			l[c] = 1
			labels = append(labels, l...)
		}
	}
	return data, labels
}
