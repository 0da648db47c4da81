package testmodel

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteGolden regenerates llm/testdata/golden from llama.cpp when TANDEM_LLAMA_GOLDEN names
// the golden tool (a small program over libllama that prints the logits of every position with
// flash attention off, an F32 KV cache, no repacked weights, and greedy tokens; see the README in
// llm/testdata/golden).
func TestWriteGolden(t *testing.T) {
	tool := os.Getenv("TANDEM_LLAMA_GOLDEN")
	if tool == "" {
		t.Skip("TANDEM_LLAMA_GOLDEN is not set")
	}
	dir := filepath.Join("..", "testdata", "golden")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range Cases() {
		path := filepath.Join(t.TempDir(), c.Name+".gguf")
		if err := Write(path, c.Spec); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		ids := make([]string, len(c.IDs))
		for i, id := range c.IDs {
			ids[i] = fmt.Sprint(id)
		}
		out, err := exec.Command(tool, path, strings.Join(ids, ","), "0", "f32", fmt.Sprint(c.Gen), "2").Output()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		var b bytes.Buffer
		fmt.Fprintf(&b, "# %s: llama.cpp 3f545bec, flash attention off, KV f32, use_extra_bufts false, 2 threads\n", c.Name)
		fmt.Fprintf(&b, "# made by: TANDEM_LLAMA_GOLDEN=golden go test ./llm/testmodel -run TestWriteGolden\n")
		fmt.Fprintf(&b, "ids %s\n", strings.Join(ids, ","))
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if rest, ok := strings.CutPrefix(line, "GEN"); ok {
				fmt.Fprintf(&b, "gen%s\n", rest)
			} else {
				fmt.Fprintf(&b, "logits %s\n", line)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, c.Name+".txt"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
