package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeFree declares the README snippets' free variables: data the reader brings.
var readmeFree = map[string]string{
	"weights":  "make([]float32, 4096*4096)",
	"input":    "make([]float32, 4096*8)",
	"vk":       "core.Backend(nil)",
	"be":       "core.Backend(nil)",
	"model":    "opt.Model{}",
	"ds":       "(*opt.Dataset)(nil)",
	"features": "[]float32{}",
	"labels":   "[]float32{}",
	"test":     "(*opt.Dataset)(nil)",
	"inputs":   "(*opt.Dataset)(nil)",
	"ctx":      "context.Background()",
	"fn":       "func(id int32, text string) error { return nil }",
	"n":        "0",
	"id":       "int32(0)",
	"buf":      "[]float32(nil)",
}

var shortDecl = regexp.MustCompile(`(?m)^\s*([A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*)\s*:=`)

// TestREADMECode compiles every Go snippet of README.md as written (each as the body of a
// function, with the packages it names imported) and runs the first one, which must print the
// product the README promises. A README that drifts from the API fails here.
func TestREADMECode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program with the go tool")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	if len(blocks) < 2 {
		t.Fatalf("README.md has %d Go snippets, want at least 2", len(blocks))
	}
	var src strings.Builder
	src.WriteString(`package main

import (
	"context"
	"fmt"
	"os"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/backends/vulkan"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/llm"
	"github.com/tandem-ml/tandem/opt"
	"github.com/tandem-ml/tandem/scheduler"
)

var (
	_ = context.Background
	_ = os.Stdout
	_ = opt.New
	_ = alloc.AllocCtxTensors
	_ = vulkan.New
	_ = scheduler.New
	_ = llm.Open
	_ = cpu.New
)
`)
	for i, b := range blocks {
		body := b[1]
		fmt.Fprintf(&src, "\nfunc snippet%d() error {\n", i)
		declared := map[string]bool{}
		for _, m := range shortDecl.FindAllStringSubmatch(body, -1) {
			for _, name := range strings.Split(m[1], ",") {
				declared[strings.TrimSpace(name)] = true
			}
		}
		for name, init := range readmeFree {
			if !declared[name] && regexp.MustCompile(`\b`+name+`\b`).MatchString(body) {
				fmt.Fprintf(&src, "\t%s := %s\n", name, init)
				fmt.Fprintf(&src, "\t_ = %s\n", name)
			}
		}
		src.WriteString(body)
		seen := map[string]bool{}
		for _, m := range shortDecl.FindAllStringSubmatch(body, -1) {
			for _, name := range strings.Split(m[1], ",") {
				name = strings.TrimSpace(name)
				if name != "_" && name != "err" && !seen[name] {
					seen[name] = true
					fmt.Fprintf(&src, "\t_ = %s\n", name)
				}
			}
		}
		if i == 0 {
			src.WriteString("\tif err != nil {\n\t\treturn err\n\t}\n\tfmt.Println(out)\n")
		}
		src.WriteString("\treturn err\n}\n")
	}
	src.WriteString("\nfunc main() {\n\tif err := snippet0(); err != nil {\n\t\tfmt.Println(\"error:\", err)\n\t}\n}\n")

	dir, err := os.MkdirTemp(".", "readme-check-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(goTool, "run", "./"+filepath.Base(dir)).CombinedOutput()
	if err != nil {
		t.Fatalf("README snippets do not build or run: %v\n%s\n--- generated program:\n%s", err, out, src.String())
	}
	if got, want := strings.TrimSpace(string(out)), "[60 55 50 110 90 54 54 126 42 29 28 64]"; got != want {
		t.Fatalf("README's first snippet printed %q, want %q", got, want)
	}
}
