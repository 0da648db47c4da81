package tokenizer

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestHangTmp(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for it := 0; it < 20000; it++ {
		n := rng.IntN(3000)
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rng.IntN(256))
		}
		done := make(chan bool)
		go func() { fuzzBody(t, data); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			t.Fatalf("hang on %q", data)
		}
	}
}
