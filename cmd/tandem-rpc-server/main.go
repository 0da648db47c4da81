// Command tandem-rpc-server exposes tandem's backends (CPU, Vulkan) to ggml RPC clients such as
// llama.cpp's --rpc, speaking ggml's RPC protocol 5.1.0. It binds to loopback unless told
// otherwise: the protocol has no authentication or encryption. Clients are served at once, each
// connection with its own buffers and stored graphs (GRAPH_RECOMPUTE); requests on different
// devices run in parallel, those on one device take turns.
//
//	go run ./cmd/tandem-rpc-server -addr 127.0.0.1:50052 -backends cpu,vulkan -threads 4
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/backends/rpc"
	"github.com/tandem-ml/tandem/backends/vulkan"
	"github.com/tandem-ml/tandem/core"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "tandem-rpc-server:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("tandem-rpc-server", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:50052", "address to listen on (host:port); loopback unless you trust the network")
	list := fs.String("backends", "cpu", "comma-separated devices to offer, in order: cpu, vulkan (vulkan:N for device N)")
	threads := fs.Int("threads", 0, "CPU backend threads (0: all cores)")
	cacheDir := fs.String("cache", "", "directory caching uploads over 10 MiB for SET_TENSOR_HASH (empty: off)")
	maxPayload := fs.Uint64("max-payload", 4<<30, "largest SET_TENSOR or GRAPH_COMPUTE request accepted, in bytes")
	maxConn := fs.Uint64("max-conn-bytes", 0, "buffer memory one connection may hold, in bytes (0: no limit)")
	verbose := fs.Bool("v", false, "log every connection")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var backends []core.Backend
	defer func() {
		for _, b := range backends {
			b.Close()
		}
	}()
	for _, name := range strings.Split(*list, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "cpu":
			be, err := cpu.New(cpu.Options{Threads: *threads})
			if err != nil {
				return err
			}
			backends = append(backends, be)
		case name == "vulkan" || strings.HasPrefix(name, "vulkan:"):
			if ok, why := vulkan.Available(); !ok {
				return fmt.Errorf("vulkan is not available: %s", why)
			}
			dev := 0
			if i := strings.IndexByte(name, ':'); i >= 0 {
				if _, err := fmt.Sscanf(name[i+1:], "%d", &dev); err != nil {
					return fmt.Errorf("bad device in %q", name)
				}
			}
			be, err := vulkan.New(dev)
			if err != nil {
				return err
			}
			backends = append(backends, be)
		default:
			return fmt.Errorf("unknown backend %q (want cpu or vulkan[:N])", name)
		}
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "WARNING: the ggml RPC protocol has no authentication or encryption; anyone who can reach %s can use and crash-test this server. Never expose it to an untrusted network.\n", l.Addr())
	for i, b := range backends {
		free, total := b.Device().Memory()
		fmt.Fprintf(os.Stderr, "device %d: %s (%s), memory %d/%d MiB\n", i, b.Name(), b.Device().Description(), free>>20, total>>20)
	}
	fmt.Fprintf(os.Stderr, "tandem-rpc-server listening on %s (protocol %d.%d.%d)\n", l.Addr(), rpc.ProtoMajor, rpc.ProtoMinor, rpc.ProtoPatch)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := &rpc.Server{Backends: backends, Logger: log, CacheDir: *cacheDir, MaxPayload: *maxPayload, MaxConnBytes: *maxConn}
	return s.Serve(ctx, l)
}
