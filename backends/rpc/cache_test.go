package rpc

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// Uploads over 10 MiB offer their FNV-1a hash first: with an empty cache the server answers 0
// and gets the bytes (and saves them under the hash); the next identical upload, on a fresh
// connection, is served from the cache.
func TestSetTensorHashCache(t *testing.T) {
	be, err := cpu.New(cpu.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s := &Server{Backends: []core.Backend{be}, CacheDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	go func() { s.Serve(ctx, l); close(done) }()
	defer func() { cancel(); <-done }()

	data := make([]byte, hashMinBytes+64)
	for i := range data {
		data[i] = byte(i*31 + i>>11)
	}
	upload := func() (cached bool) {
		dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer dcancel()
		c, err := Dial(dctx, l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		bt := c.Device(0).BufferType()
		buf, err := bt.Alloc(int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		tt := &core.Tensor{Type: core.TypeI8, Ne: [4]int64{int64(len(data)), 1, 1, 1}, Buffer: buf}
		tt.Nb = [4]int64{1, int64(len(data)), int64(len(data)), int64(len(data))}
		// Ask the way SetTensor does, to see which path the server takes.
		w, err := buf.(*Buffer).wireFor("set", tt, 0, int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		p := make([]byte, setHashReqSize)
		w.put(p)
		le.PutUint64(p[tensorSize+8:], fnv1a64(data))
		r, err := c.call(context.Background(), cmdSetTensorHash, 1, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := buf.SetTensor(tt, data, 0); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(data))
		if err := buf.GetTensor(tt, got, 0); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Fatal("read back differs")
		}
		return r[0] == 1
	}
	if upload() {
		t.Fatal("empty cache answered 1")
	}
	name := filepath.Join(dir, "0000000000000000"[:16-len(hexOf(fnv1a64(data)))]+hexOf(fnv1a64(data)))
	if st, err := os.Stat(name); err != nil || st.Size() != int64(len(data)) {
		t.Fatalf("cache file %s: %v", name, err)
	}
	if !upload() {
		t.Fatal("second upload missed the cache")
	}
}

func hexOf(v uint64) string {
	const digits = "0123456789abcdef"
	var b []byte
	for v > 0 {
		b = append([]byte{digits[v&15]}, b...)
		v >>= 4
	}
	return string(b)
}
