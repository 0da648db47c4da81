package core

import (
	"sync"
	"testing"
)

// Tensors and ops may be created in one context from several goroutines: every tensor is
// recorded once, with its own memory, and the accounting adds up (run with -race).
func TestContextConcurrentUse(t *testing.T) {
	c := NewContext(ContextParams{MemSize: 8 << 20})
	const workers, each = 8, 50
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				a := c.NewTensor1D(TypeF32, 16)
				_ = c.Add(a, a)
				_ = c.Err()
				_ = c.Tensors()
				_ = c.Used()
			}
		}()
	}
	wg.Wait()
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	ts := c.Tensors()
	if len(ts) != 2*workers*each {
		t.Fatalf("%d tensors recorded, want %d", len(ts), 2*workers*each)
	}
	seen := map[int64]bool{}
	for i, x := range ts {
		if x.id != i {
			t.Fatalf("tensor %d has id %d", i, x.id)
		}
		if seen[x.Offset] {
			t.Fatalf("two tensors share offset %d", x.Offset)
		}
		seen[x.Offset] = true
	}
	if c.Used() > c.MemSize() {
		t.Fatalf("used %d > MemSize %d", c.Used(), c.MemSize())
	}
}
