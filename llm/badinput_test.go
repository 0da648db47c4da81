package llm_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core/gguf"
	"github.com/tandem-ml/tandem/llm"
)

// rewrite copies the model file at src to a new file with its metadata or tensors edited.
func rewrite(t *testing.T, src string, edit func(w *gguf.Writer, f *gguf.File) error) string {
	t.Helper()
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := gguf.WriterFrom(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := edit(w, f); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "edited.gguf")
	if err := w.WriteFile(dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

// withoutTensor rebuilds the file without the named tensor.
func withoutTensor(name string) func(w *gguf.Writer, f *gguf.File) error {
	return func(w *gguf.Writer, f *gguf.File) error {
		nw := gguf.NewWriter()
		for _, kv := range w.Metadata.KVs() {
			if err := nw.Metadata.Set(kv.Key, kv.Value); err != nil {
				return err
			}
		}
		for _, ti := range f.Tensors {
			if ti.Name == name {
				continue
			}
			r, err := f.TensorReader(ti.Name)
			if err != nil {
				return err
			}
			if err := nw.AddTensorData(ti, func(dst []byte, off int64) error { _, err := r.ReadAt(dst, off); return err }); err != nil {
				return err
			}
		}
		*w = *nw
		return nil
	}
}

func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// TestOpenBadModels: each broken file gives an error naming what is wrong, and a failed Open leaves
// no file open.
func TestOpenBadModels(t *testing.T) {
	c := caseByName(t, "llama-f32")
	good := modelFile(t, c.Name, c.Spec)
	setKV := func(key string, v any) func(w *gguf.Writer, f *gguf.File) error {
		return func(w *gguf.Writer, _ *gguf.File) error { return w.Metadata.Set(key, v) }
	}
	delKV := func(key string) func(w *gguf.Writer, f *gguf.File) error {
		return func(w *gguf.Writer, _ *gguf.File) error { w.Metadata.Delete(key); return nil }
	}
	cases := []struct {
		name string
		edit func(w *gguf.Writer, f *gguf.File) error
		want []string
	}{
		{"unknown architecture", setKV("general.architecture", "mamba9"), []string{"unknown architecture", "mamba9", "llama"}},
		{"no architecture", delKV("general.architecture"), []string{"general.architecture"}},
		{"missing tensor", withoutTensor("blk.1.ffn_down.weight"), []string{"blk.1.ffn_down.weight", "missing", "[96 64]"}},
		{"missing embeddings", withoutTensor("token_embd.weight"), []string{"token_embd.weight", "missing"}},
		{"wrong shape", setKV("llama.feed_forward_length", uint32(128)), []string{"ffn_gate.weight", "shape", "[64 128]"}},
		{"heads do not divide", setKV("llama.attention.head_count_kv", uint32(3)), []string{"head_count_kv 3"}},
		{"no block count", delKV("llama.block_count"), []string{"llama.block_count", "missing"}},
		{"vocab missing", delKV("tokenizer.ggml.tokens"), []string{"vocab", "tokenizer.ggml.tokens"}},
		{"vocab model missing", delKV("tokenizer.ggml.model"), []string{"tokenizer.ggml.model"}},
		{"rope scaling", setKV("llama.rope.scaling.factor", float32(4)), []string{}},
		{"yarn", func(w *gguf.Writer, f *gguf.File) error {
			if err := w.Metadata.Set("llama.rope.scaling.type", "yarn"); err != nil {
				return err
			}
			return w.Metadata.Set("llama.rope.scaling.factor", float32(4))
		}, []string{"rope scaling", "yarn"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := rewrite(t, good, tc.edit)
			before := openFDs()
			m, err := llm.Open(path, llm.Options{})
			if len(tc.want) == 0 { // a valid variant
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				m.Close()
				return
			}
			if err == nil {
				m.Close()
				t.Fatal("Open succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if after := openFDs(); after != before {
				t.Errorf("open files %d before, %d after the failed Open", before, after)
			}
		})
	}
	if _, err := llm.Open(filepath.Join(t.TempDir(), "nope.gguf"), llm.Options{}); err == nil || !strings.Contains(err.Error(), "nope.gguf") {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := llm.Open(good, llm.Options{Threads: -1}); err == nil {
		t.Error("Threads -1 accepted")
	}
	if _, err := llm.Open(good, llm.Options{GPULayers: 1, RPC: []string{"127.0.0.1:1"}}); err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("an unreachable RPC server: %v", err)
	}
}

// TestEvalBadInput: out-of-range ids, a full context, a cancelled context, bad options and calls on
// closed sessions are errors, and a failed Eval leaves the session's positions as they were.
func TestEvalBadInput(t *testing.T) {
	c := caseByName(t, "llama-f32")
	m := openCase(t, c.Name, llm.Options{})
	ctx := context.Background()
	s, err := m.NewSession(llm.SessionOptions{ContextSize: 256, KVType: llm.KVF32})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	nv := int32(m.HParams.NVocab)
	for _, ids := range [][]int32{{nv}, {1, -1}, {1, 2, nv + 1000}} {
		if _, err := s.Eval(ctx, ids, llm.AllLogits); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("ids %v: %v", ids, err)
		}
	}
	if _, err := s.Eval(ctx, nil, llm.AllLogits); err == nil {
		t.Error("no tokens accepted")
	}
	if _, err := s.Eval(ctx, c.IDs, llm.Logits(9)); err == nil {
		t.Error("Logits(9) accepted")
	}
	if _, err := s.Eval(ctx, c.IDs[:4], llm.NoLogits); err != nil {
		t.Fatal(err)
	}
	full := make([]int32, 253)
	for i := range full {
		full[i] = 5
	}
	if _, err := s.Eval(ctx, full, llm.LastLogits); !errors.Is(err, llm.ErrContextFull) {
		t.Errorf("253 tokens after 4 in 256 cells: %v, want ErrContextFull", err)
	}
	if _, err := s.Eval(ctx, full[:252], llm.NoLogits); err != nil {
		t.Errorf("filling the context exactly: %v", err)
	}
	if _, err := s.Eval(ctx, []int32{1}, llm.LastLogits); !errors.Is(err, llm.ErrContextFull) {
		t.Errorf("one token past a full context: %v", err)
	}
	if _, err := s.Generate(ctx, []int32{1}, llm.GenerateOptions{MaxTokens: 4}); !errors.Is(err, llm.ErrContextFull) {
		t.Errorf("Generate past a full context: %v", err)
	}
	s.Reset()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Eval(cctx, c.IDs, llm.AllLogits); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	if s.Pos() != 0 {
		t.Errorf("Pos() = %d after failed Evals, want 0", s.Pos())
	}
	if _, err := s.Generate(ctx, c.IDs, llm.GenerateOptions{}); err == nil {
		t.Error("MaxTokens 0 accepted")
	}
	for _, so := range []llm.SessionOptions{{ContextSize: -1}, {KVType: llm.KVType(7)}, {FlashAttn: llm.FlashAttn(5)},
		{BatchSize: -2}, {KVType: llm.KVQ8_0, FlashAttn: llm.FlashAttnOff}} {
		if s2, err := m.NewSession(so); err == nil {
			s2.Close()
			t.Errorf("NewSession(%+v) accepted", so)
		}
	}
	if _, err := llm.NewSampler(llm.SamplerOptions{RepeatPenalty: -1}); err == nil {
		t.Error("a negative repeat penalty accepted")
	}
	s.Close()
	if _, err := s.Eval(ctx, c.IDs, llm.AllLogits); err == nil {
		t.Error("Eval on a closed session")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestModelCloseClosesSessions: closing a model closes its sessions; a closed model refuses new ones.
func TestModelCloseClosesSessions(t *testing.T) {
	c := caseByName(t, "llama-f32")
	m, err := llm.Open(modelFile(t, c.Name, c.Spec), llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.NewSession(llm.SessionOptions{ContextSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Eval(context.Background(), c.IDs, llm.LastLogits); err == nil {
		t.Error("Eval on a session of a closed model")
	}
	if _, err := m.NewSession(llm.SessionOptions{}); err == nil {
		t.Error("NewSession on a closed model")
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
