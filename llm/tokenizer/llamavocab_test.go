package tokenizer

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLlamaVocabFiles runs llama.cpp's own tokenizer test vectors (models/ggml-vocab-*.gguf with
// their .inp/.out pairs, as test-tokenizer-0 reads them: add_special and parse_special off) when
// TANDEM_LLAMA_VOCAB_DIR names the directory that holds them.
func TestLlamaVocabFiles(t *testing.T) {
	dir := os.Getenv("TANDEM_LLAMA_VOCAB_DIR")
	if dir == "" {
		t.Skip("TANDEM_LLAMA_VOCAB_DIR not set (llama.cpp's models/ directory)")
	}
	files, err := filepath.Glob(filepath.Join(dir, "ggml-vocab-*.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no ggml-vocab-*.gguf in %s", dir)
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".gguf")
		t.Run(name, func(t *testing.T) {
			texts, want, err := readVocabTests(path)
			if err != nil {
				t.Skip(err)
			}
			v, err := Open(path)
			if err != nil {
				if strings.Contains(err.Error(), "not supported") {
					t.Skipf("%v", err)
				}
				t.Fatal(err)
			}
			pass := 0
			for i, text := range texts {
				got, err := v.Encode(text, false, false)
				if err != nil {
					t.Errorf("%q: %v", text, err)
					continue
				}
				if equalIDs(got, want[i]) {
					pass++
					continue
				}
				t.Errorf("%q:\n got  %v\n want %v", text, got, want[i])
			}
			t.Logf("%s (%s/%s): %d/%d pass", name, v.Model(), v.Pre(), pass, len(texts))
		})
	}
}

// readVocabTests reads path.inp (texts separated by a line __ggml_vocab_test__) and path.out (the
// ids of each text on a line).
func readVocabTests(path string) ([]string, [][]int32, error) {
	inp, err := os.ReadFile(path + ".inp")
	if err != nil {
		return nil, nil, err
	}
	out, err := os.ReadFile(path + ".out")
	if err != nil {
		return nil, nil, err
	}
	const sep = "\n__ggml_vocab_test__\n"
	var texts []string
	raw := string(inp)
	for pos := 0; pos < len(raw); {
		i := strings.Index(raw[pos:], sep)
		if i < 0 {
			texts = append(texts, raw[pos:])
			break
		}
		texts = append(texts, raw[pos:pos+i])
		pos += i + len(sep)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(texts) {
		return nil, nil, errf("%s: %d texts, %d id lines", path, len(texts), len(lines))
	}
	want := make([][]int32, len(lines))
	for i, l := range lines {
		for _, f := range strings.Fields(l) {
			n, err := strconv.ParseInt(f, 10, 32)
			if err != nil {
				return nil, nil, err
			}
			want[i] = append(want[i], int32(n))
		}
	}
	return texts, want, nil
}

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
