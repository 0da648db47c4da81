package core_test

import (
	"fmt"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// badCase is one hostile call: run returns the error the call gave (nil when it was accepted), and
// the error text must contain every want substring (case-insensitively).
type badCase struct {
	class int // issue 10's class: 1 overflow, 2 views/strides/empty, 3 nil, 6 silent writes
	name  string
	want  []string
	run   func() error
}

// runBadCases runs every case in a subtest, failing on a panic, a nil error or a text that does
// not name the problem, and returns the number of cases per class.
func runBadCases(t *testing.T, cases []badCase) map[int]int {
	t.Helper()
	counts := map[int]int{}
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.name] {
			t.Errorf("duplicate case name %q", c.name)
		}
		seen[c.name] = true
		counts[c.class]++
		t.Run(fmt.Sprintf("class%d/%s", c.class, c.name), func(t *testing.T) {
			err := callNoPanic(t, c.run)
			if err == nil {
				t.Fatalf("accepted; want an error containing %q", c.want)
			}
			msg := strings.ToLower(err.Error())
			for _, w := range c.want {
				if !strings.Contains(msg, strings.ToLower(w)) {
					t.Fatalf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	return counts
}

// callNoPanic runs f, turning a panic into a test failure.
func callNoPanic(t *testing.T, f func() error) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return f()
}

// build runs f on a fresh NoAlloc context and returns the context's error.
func build(f func(c *core.Context)) error {
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	f(c)
	return c.Err()
}

// buildHost runs f on a fresh context with 1 MiB of host memory and returns the context's error.
func buildHost(f func(c *core.Context)) error {
	c := core.NewContext(core.ContextParams{MemSize: 1 << 20})
	f(c)
	return c.Err()
}

// hostF32 returns an allocated F32 tensor of shape ne holding 1, 2, 3, ...
func hostF32(t testing.TB, ne ...int64) *core.Tensor {
	t.Helper()
	c := core.NewContext(core.ContextParams{MemSize: 1 << 20})
	x := c.NewTensor(core.TypeF32, ne...)
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	v := make([]float32, x.NElements())
	for i := range v {
		v[i] = float32(i + 1)
	}
	if err := core.SetFloat32s(x, v); err != nil {
		t.Fatal(err)
	}
	return x
}

// devBufType is a buffer type whose buffers are not host memory (like a GPU's), for the paths that
// must not assume host memory.
type devBufType struct{}

func (devBufType) Name() string                   { return "FakeDev" }
func (devBufType) Alignment() int64               { return 32 }
func (devBufType) MaxSize() int64                 { return 0 }
func (devBufType) AllocSize(t *core.Tensor) int64 { return t.NBytes() }
func (devBufType) IsHost() bool                   { return false }
func (devBufType) Device() core.Device            { return nil }
func (bt devBufType) Alloc(size int64) (core.Buffer, error) {
	return &devBuf{data: make([]byte, size)}, nil
}

type devBuf struct {
	data  []byte
	freed bool
	usage core.BufferUsage
}

func (b *devBuf) Type() core.BufferType       { return devBufType{} }
func (b *devBuf) Size() int64                 { return int64(len(b.data)) }
func (b *devBuf) Usage() core.BufferUsage     { return b.usage }
func (b *devBuf) SetUsage(u core.BufferUsage) { b.usage = u }
func (b *devBuf) Freed() bool                 { return b.freed }
func (b *devBuf) Free() error                 { b.data, b.freed = nil, true; return nil }
func (b *devBuf) Clear(v byte) error {
	for i := range b.data {
		b.data[i] = v
	}
	return nil
}
func (b *devBuf) SetTensor(t *core.Tensor, data []byte, off int64) error {
	copy(b.data[t.Offset+off:], data)
	return nil
}
func (b *devBuf) GetTensor(t *core.Tensor, dst []byte, off int64) error {
	copy(dst, b.data[t.Offset+off:])
	return nil
}
func (b *devBuf) MemsetTensor(t *core.Tensor, v byte, off, size int64) error {
	for i := range size {
		b.data[t.Offset+off+i] = v
	}
	return nil
}

// devF32 returns an F32 tensor of shape ne placed in a fresh device buffer.
func devF32(t testing.TB, ne ...int64) (*core.Tensor, core.Buffer) {
	t.Helper()
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	x := c.NewTensor(core.TypeF32, ne...)
	buf, err := devBufType{}.Alloc(x.NBytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := core.TensorAlloc(buf, x, 0); err != nil {
		t.Fatal(err)
	}
	return x, buf
}

// freedF32 returns an F32 tensor of shape ne whose host buffer was freed.
func freedF32(t testing.TB, ne ...int64) *core.Tensor {
	t.Helper()
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	x := c.NewTensor(core.TypeF32, ne...)
	buf, err := core.HostBufferType().Alloc(x.NBytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := core.TensorAlloc(buf, x, 0); err != nil {
		t.Fatal(err)
	}
	if err := buf.Free(); err != nil {
		t.Fatal(err)
	}
	return x
}
