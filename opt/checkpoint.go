package opt

import (
	"fmt"
	"io"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/gguf"
)

// Checkpoint format: a GGUF file (core/gguf) holding the parameters under their names, the AdamW
// moments as "opt.m.<i>" and "opt.v.<i>" (i: the parameter's index in Model.Params), and the
// metadata keys "tandem.opt.optimizer" ("adamw" or "sgd") and "tandem.opt.step" (u64, steps
// taken). Parameters without a name are named "param.<i>" by Save.
const (
	keyOptimizer = "tandem.opt.optimizer"
	keyStep      = "tandem.opt.step"
)

func (t *Trainer) optimizerName() string {
	if t.cfg.Optimizer == SGD {
		return "sgd"
	}
	return "adamw"
}

// checkpointTensors are the tensors a checkpoint holds, named.
func (t *Trainer) checkpointTensors() []*core.Tensor {
	var ts []*core.Tensor
	for i, p := range t.cfg.Model.Params {
		if p.Name == "" {
			p.SetName(fmt.Sprintf("param.%d", i))
		}
		ts = append(ts, p)
	}
	return append(ts, t.moments...)
}

// Save writes the parameters, the optimizer's moments and the step count to path, so that Load
// resumes training exactly where it stopped.
func (t *Trainer) Save(path string) error {
	var md gguf.Metadata
	if err := md.Set(keyOptimizer, t.optimizerName()); err != nil {
		return err
	}
	if err := md.Set(keyStep, uint64(t.step)); err != nil {
		return err
	}
	if err := gguf.WriteFile(path, &md, t.checkpointTensors()); err != nil {
		return fmt.Errorf("tandem: opt: saving %s: %w", path, err)
	}
	return nil
}

// Load reads a checkpoint written by Save for the same model and optimizer: every parameter and
// moment must be present with its shape and type. On error nothing is half-loaded only for the
// checks made before reading (shapes, names, optimizer); a read error may leave some tensors set.
func (t *Trainer) Load(path string) error {
	f, err := gguf.Open(path)
	if err != nil {
		return fmt.Errorf("tandem: opt: %w", err)
	}
	defer f.Close()
	name, err := f.GetString(keyOptimizer)
	if err != nil {
		return fmt.Errorf("tandem: opt: %s: %w", path, err)
	}
	if name != t.optimizerName() {
		return fmt.Errorf("tandem: opt: %s holds %s state, the trainer uses %s", path, name, t.optimizerName())
	}
	step, err := f.GetUint64(keyStep)
	if err != nil {
		return fmt.Errorf("tandem: opt: %s: %w", path, err)
	}
	ts := t.checkpointTensors()
	for _, x := range ts {
		ti, ok := f.Tensor(x.Name)
		if !ok {
			return fmt.Errorf("tandem: opt: %s has no tensor %q", path, x.Name)
		}
		if ti.Type != x.Type || ti.Ne != x.Ne {
			return fmt.Errorf("tandem: opt: %s: tensor %q is %v %v, the model's is %v %v", path, x.Name, ti.Type, ti.Ne, x.Type, x.Ne)
		}
	}
	for _, x := range ts {
		r, err := f.TensorReader(x.Name)
		if err != nil {
			return fmt.Errorf("tandem: opt: %w", err)
		}
		buf := make([]byte, x.NBytes())
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("tandem: opt: reading %q from %s: %w", x.Name, path, err)
		}
		if err := core.TensorSet(x, buf, 0); err != nil {
			return fmt.Errorf("tandem: opt: %w", err)
		}
	}
	t.step = int(step)
	return nil
}
