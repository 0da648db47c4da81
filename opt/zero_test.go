package opt_test

import (
	"testing"

	"github.com/tandem-ml/tandem/opt"
	"github.com/tandem-ml/tandem/tests/zerotest"
)

// TestZeroValues: the methods of a zero Trainer and Dataset never panic; a zero Trainer's errors
// say how to make one.
func TestZeroValues(t *testing.T) {
	zerotest.Methods[opt.Trainer](t, "create one with opt.New", "Close")
	zerotest.Methods[opt.Dataset](t, "")
}
