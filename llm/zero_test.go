package llm_test

import (
	"context"
	"testing"

	"github.com/tandem-ml/tandem/llm"
	"github.com/tandem-ml/tandem/tests/zerotest"
)

// A zero Model panicked in Tokenize, Detokenize and LayerBackend, a zero Session in Close,
// ContextSize and KVType; now none panics, and errors say how to make one.
func TestZeroValues(t *testing.T) {
	zerotest.Methods[llm.Model](t, "open one with llm.Open")
	zerotest.Methods[llm.Session](t, "create one with Model.NewSession", "Truncate")

	var s llm.Session
	if _, err := s.Eval(context.Background(), []int32{1, 2}, llm.AllLogits); err == nil {
		t.Fatal("Eval on a zero Session: no error")
	}
	var m llm.Model
	if _, err := m.NewSession(llm.SessionOptions{ContextSize: 16}); err == nil {
		t.Fatal("NewSession on a zero Model: no error")
	}
}
