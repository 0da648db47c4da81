package core_test

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// TestLightningIndexerNodeValid: the constructor's node is valid; the same node with a key of
// another length, with a source dropped, of another op, or nil is not.
func TestLightningIndexerNodeValid(t *testing.T) {
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	q := c.NewTensor(core.TypeF32, 8, 2, 3, 1)
	k := c.NewTensor(core.TypeF16, 8, 1, 5, 1)
	w := c.NewTensor(core.TypeF32, 2, 3, 1, 1)
	m := c.NewTensor(core.TypeF16, 5, 3, 1, 1)
	r := c.LightningIndexer(q, k, w, m)
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	if !core.LightningIndexerNodeValid(r) {
		t.Fatalf("the constructor's node %v is refused", r)
	}
	bad := *r
	bad.Src[1] = c.NewTensor(core.TypeF16, 8, 1, 4, 1) // 4 keys where the result has 5
	if core.LightningIndexerNodeValid(&bad) {
		t.Errorf("a node whose key count disagrees with its result is accepted")
	}
	bad = *r
	bad.Src[3] = nil
	if core.LightningIndexerNodeValid(&bad) {
		t.Errorf("a node without its mask is accepted")
	}
	bad = *r
	bad.Op = core.OpAdd
	if core.LightningIndexerNodeValid(&bad) || core.LightningIndexerNodeValid(nil) {
		t.Errorf("another op or nil is accepted")
	}
}
