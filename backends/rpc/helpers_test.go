package rpc_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/backends/rpc"
	"github.com/tandem-ml/tandem/core"
)

// quietLog keeps rejected-request logs out of test output unless -v.
func quietLog(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(tWriter{t}, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// startServer serves fresh CPU backends (n devices) on an ephemeral loopback port until the test
// ends; it returns the address and a channel closed when Serve returns.
func startServer(t *testing.T, n int) (string, <-chan error) {
	t.Helper()
	var bes []core.Backend
	for range n {
		be, err := cpu.New(cpu.Options{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		bes = append(bes, be)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	s := &rpc.Server{Backends: bes, Logger: quietLog(t)}
	go func() { done <- s.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("server did not stop")
		}
		for _, be := range bes {
			be.Close()
		}
	})
	return l.Addr().String(), done
}

func dial(t *testing.T, addr string) *rpc.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := rpc.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
