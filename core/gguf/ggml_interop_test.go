package gguf

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestGGMLReadsTandemFile runs ggml's own gguf reader on a file tandem wrote (every metadata kind,
// every tensor type) when TANDEM_GGML_GGUF_READER names a build of it: a small C program over
// ggml-base that loads the file with gguf_init_from_file (no_alloc false), prints every key, value
// and tensor (with a checksum of its data), and writes the same metadata and tensors back with
// gguf_write_to_file. The printout must match what tandem wrote and ggml's copy must equal tandem's
// file byte for byte. The program is not part of tandem (see core/gguf's report for how it was
// built); without it the test is skipped.
func TestGGMLReadsTandemFile(t *testing.T) {
	reader := os.Getenv("TANDEM_GGML_GGUF_READER")
	if reader == "" {
		t.Skip("TANDEM_GGML_GGUF_READER is not set")
	}
	// ggml's gguf_set_kv does not apply a copied general.alignment to the writer (its copy would
	// be laid out at 32 while claiming 64), so the byte comparison uses the default alignment.
	for _, align := range []bool{true, false} {
		t.Run(fmt.Sprintf("alignment=%v", align), func(t *testing.T) { ggmlReads(t, reader, align) })
	}
}

func ggmlReads(t *testing.T, reader string, withAlignment bool) {
	var kvs []KV
	for _, kv := range allKinds() {
		switch {
		case kv.Key == "k.str":
			kv.Value = "héllo wörld" // ggml returns C strings: no NUL bytes inside
		case kv.Key == KeyAlignment && !withAlignment:
			continue
		}
		kvs = append(kvs, kv)
	}
	_, ts := testTensors(t, 5)
	dir := t.TempDir()
	path := filepath.Join(dir, "tandem.gguf")
	if err := WriteFile(path, testMetadata(t, kvs), ts); err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(dir, "ggml-copy.gguf")
	out, err := exec.Command(reader, path, copyPath).CombinedOutput()
	if err != nil {
		t.Fatalf("ggml's reader failed: %v\n%s", err, out)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	var want strings.Builder
	fmt.Fprintf(&want, "version 3 alignment %d data_offset %d\n", f.Alignment(), f.DataOffset())
	for _, kv := range kvs {
		typ, elem, _ := kv.Type()
		if typ == TypeArray {
			n := arrayLen(kv.Value)
			fmt.Fprintf(&want, "kv %s arr[%s] %d =", kv.Key, elem, n)
			for i := range n {
				want.WriteString(" " + cValue(indexValue(kv.Value, i)))
			}
			want.WriteString("\n")
		} else {
			fmt.Fprintf(&want, "kv %s %s = %s\n", kv.Key, typ, cValue(kv.Value))
		}
	}
	for _, ti := range f.Tensors {
		x := ts[f.byName[ti.Name]]
		var sum uint64
		for _, b := range x.Data() {
			sum = sum*31 + uint64(b)
		}
		fmt.Fprintf(&want, "tensor %s %s %d %d %d %d offset %d bytes %d sum %d\n",
			ti.Name, ti.Type, ti.Ne[0], ti.Ne[1], ti.Ne[2], ti.Ne[3], ti.Offset, ti.Size, sum)
	}
	if got := string(out); got != want.String() {
		t.Fatalf("ggml read:\n%s\nwant:\n%s", got, want.String())
	}
	mine, _ := os.ReadFile(path)
	theirs, err := os.ReadFile(copyPath)
	if err != nil {
		t.Fatal(err)
	}
	if withAlignment {
		t.Logf("ggml read %d keys and %d tensors (alignment %d)", len(kvs), len(ts), f.Alignment())
		return
	}
	if !bytes.Equal(mine, theirs) {
		t.Fatalf("ggml's rewrite (%d bytes) differs from tandem's file (%d bytes)", len(theirs), len(mine))
	}
	t.Logf("ggml read %d keys and %d tensors and wrote back the same %d bytes", len(kvs), len(ts), len(mine))
}

// cValue formats a scalar as the C reader prints it.
func cValue(v any) string {
	switch x := v.(type) {
	case bool:
		if x {
			return "1"
		}
		return "0"
	case float32:
		return cFloat(float64(x), 9)
	case float64:
		return cFloat(x, 17)
	case string:
		return fmt.Sprintf("%d:%x", len(x), x)
	}
	return fmt.Sprint(v)
}

// cFloat mimics printf("%.Ng").
func cFloat(v float64, prec int) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return strconv.FormatFloat(v, 'g', prec, 64)
	}
	s := strconv.FormatFloat(v, 'g', prec, 64)
	if mant, exp, ok := strings.Cut(s, "e"); ok {
		if strings.Contains(mant, ".") {
			mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
		}
		sign := exp[:1]
		digits := strings.TrimLeft(exp[1:], "0")
		for len(digits) < 2 {
			digits = "0" + digits
		}
		return mant + "e" + sign + digits
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func indexValue(v any, i int) any {
	switch x := v.(type) {
	case []uint8:
		return x[i]
	case []int8:
		return x[i]
	case []uint16:
		return x[i]
	case []int16:
		return x[i]
	case []uint32:
		return x[i]
	case []int32:
		return x[i]
	case []float32:
		return x[i]
	case []bool:
		return x[i]
	case []string:
		return x[i]
	case []uint64:
		return x[i]
	case []int64:
		return x[i]
	case []float64:
		return x[i]
	}
	return nil
}
