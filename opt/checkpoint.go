package opt

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/gguf"
)

// Checkpoint format: a GGUF file (core/gguf) holding the parameters under their names, the AdamW
// moments as "opt.m.<i>" and "opt.v.<i>" and, with Config.Accumulate > 1, the gradient
// accumulators as "opt.acc.<i>" (i: the parameter's index in Model.Params), and the metadata keys
// "tandem.opt.optimizer" ("adamw" or "sgd"), "tandem.opt.step" (u64, optimizer steps taken) and
// "tandem.opt.micro" (u64, batches accumulated since the last step). Parameters without a name are
// named "param.<i>" by Save.
const (
	keyOptimizer = "tandem.opt.optimizer"
	keyStep      = "tandem.opt.step"
	keyMicro     = "tandem.opt.micro"
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
	ts = append(ts, t.moments...)
	return append(ts, t.accs...)
}

// Save writes the parameters, the optimizer's state and the step count to w as a GGUF file, so
// that Load resumes training exactly where it stopped.
func (t *Trainer) Save(w io.Writer) error {
	if t == nil || t.s == nil {
		return errClosed
	}
	var md gguf.Metadata
	for _, kv := range []struct {
		k string
		v any
	}{{keyOptimizer, t.optimizerName()}, {keyStep, uint64(t.step)}, {keyMicro, uint64(t.micro)}} {
		if err := md.Set(kv.k, kv.v); err != nil {
			return fmt.Errorf("tandem: opt: saving: %w", err)
		}
	}
	if err := gguf.Write(w, &md, t.checkpointTensors()); err != nil {
		return fmt.Errorf("tandem: opt: saving: %w", err)
	}
	return nil
}

// SaveFile is Save to a new file at path (replaced if it exists).
func (t *Trainer) SaveFile(path string) error {
	if t == nil || t.s == nil {
		return errClosed
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("tandem: opt: %w", err)
	}
	if err := t.Save(f); err != nil {
		f.Close()
		return fmt.Errorf("%w (%s)", err, path)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("tandem: opt: saving %s: %w", path, err)
	}
	return nil
}

// Load reads a checkpoint written by Save for the same model, optimizer and Accumulate: every
// parameter and state tensor must be present with its shape and type. r is read in place when it
// is an io.ReaderAt and io.Seeker (an *os.File, a *bytes.Reader), else into memory first. Nothing
// is changed when a check made before reading fails (missing tensors, shapes, optimizer); a read
// error or a done ctx (checked before each tensor; its error is wrapped) may leave some tensors
// set. A nil ctx means context.Background().
func (t *Trainer) Load(ctx context.Context, r io.Reader) error {
	if t == nil || t.s == nil {
		return errClosed
	}
	if ctx == nil {
		ctx = context.Background()
	}
	var (
		ra   io.ReaderAt
		size int64
	)
	if rs, ok := r.(interface {
		io.ReaderAt
		io.Seeker
	}); ok {
		n, err := rs.Seek(0, io.SeekEnd)
		if err != nil {
			return fmt.Errorf("tandem: opt: loading: %w", err)
		}
		ra, size = rs, n
	} else {
		data, err := io.ReadAll(r)
		if err != nil {
			return fmt.Errorf("tandem: opt: loading: %w", err)
		}
		ra, size = bytes.NewReader(data), int64(len(data))
	}
	f, err := gguf.Read(ra, size)
	if err != nil {
		return fmt.Errorf("tandem: opt: loading: %w", err)
	}
	defer f.Close()
	return t.load(ctx, f)
}

// LoadFile is Load from the file at path.
func (t *Trainer) LoadFile(ctx context.Context, path string) error {
	if t == nil || t.s == nil {
		return errClosed
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("tandem: opt: %w", err)
	}
	defer f.Close()
	if err := t.Load(ctx, f); err != nil {
		return fmt.Errorf("%w (%s)", err, path)
	}
	return nil
}

func (t *Trainer) load(ctx context.Context, f *gguf.File) error {
	name, err := f.GetString(keyOptimizer)
	if err != nil {
		return fmt.Errorf("tandem: opt: loading: %w", err)
	}
	if name != t.optimizerName() {
		return fmt.Errorf("tandem: opt: loading: the checkpoint holds %s state, the trainer uses %s", name, t.optimizerName())
	}
	step, err := f.GetUint64(keyStep)
	if err != nil {
		return fmt.Errorf("tandem: opt: loading: %w", err)
	}
	var micro uint64
	if f.Has(keyMicro) {
		if micro, err = f.GetUint64(keyMicro); err != nil {
			return fmt.Errorf("tandem: opt: loading: %w", err)
		}
	}
	if micro >= uint64(t.k) {
		return fmt.Errorf("tandem: opt: loading: the checkpoint stopped %d batches into a logical batch, the trainer accumulates %d", micro, t.k)
	}
	ts := t.checkpointTensors()
	for _, x := range ts {
		ti, ok := f.Tensor(x.Name)
		if !ok {
			return fmt.Errorf("tandem: opt: loading: the checkpoint has no tensor %q", x.Name)
		}
		if ti.Type != x.Type || ti.Ne != x.Ne {
			return fmt.Errorf("tandem: opt: loading: tensor %q is %v %v, the model's is %v %v", x.Name, ti.Type, ti.Ne, x.Type, x.Ne)
		}
	}
	var buf []byte
	for _, x := range ts {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("tandem: opt: loading stopped: %w", err)
		}
		r, err := f.TensorReader(x.Name)
		if err != nil {
			return fmt.Errorf("tandem: opt: loading: %w", err)
		}
		if n := int(x.NBytes()); cap(buf) < n {
			buf = make([]byte, n)
		}
		b := buf[:x.NBytes()]
		if _, err := io.ReadFull(r, b); err != nil {
			return fmt.Errorf("tandem: opt: loading %q: %w", x.Name, err)
		}
		if err := core.TensorSet(x, b, 0); err != nil {
			return fmt.Errorf("tandem: opt: loading: %w", err)
		}
	}
	t.step, t.micro = int(step), int(micro)
	return nil
}
