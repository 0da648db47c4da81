package tokenizer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tandem-ml/tandem/core/gguf"
)

func goldenByName(t *testing.T, name string) *Vocab {
	t.Helper()
	for _, g := range goldenVocabs() {
		if g.name == name {
			v, _ := loadGoldenVocab(t, g)
			return v
		}
	}
	t.Fatalf("no golden vocab %s", name)
	return nil
}

func id(t *testing.T, v *Vocab, text string) int32 {
	t.Helper()
	i, ok := v.TokenID(text)
	if !ok {
		t.Fatalf("no token %q", text)
	}
	return i
}

func TestVocabProperties(t *testing.T) {
	spm := goldenByName(t, "spm")
	if spm.Model() != "llama" || spm.Pre() != "default" || spm.Len() != 3+256+5+len([]rune(spmSingles))+len(spmPieces) {
		t.Errorf("spm: model %q pre %q len %d", spm.Model(), spm.Pre(), spm.Len())
	}
	if spm.BOS() != 1 || spm.EOS() != 2 || spm.UNK() != 0 || !spm.AddBOS() || spm.AddEOS() || !spm.AddSpacePrefix() {
		t.Errorf("spm: bos %d eos %d unk %d addBOS %v addEOS %v prefix %v", spm.BOS(), spm.EOS(), spm.UNK(), spm.AddBOS(), spm.AddEOS(), spm.AddSpacePrefix())
	}
	// no eot key: "<|im_end|>" and "<|endoftext|>" are candidates, the higher id wins
	if got, want := spm.EOT(), id(t, spm, "<|endoftext|>"); got != want {
		t.Errorf("spm EOT %d, want %d", got, want)
	}
	wantEOG := []int32{2, id(t, spm, "<|im_end|>"), id(t, spm, "<|endoftext|>")}
	if got := spm.EOGs(); fmt.Sprint(got) != fmt.Sprint(wantEOG) {
		t.Errorf("spm EOGs %v, want %v", got, wantEOG)
	}
	if !spm.IsControl(1) || spm.IsControl(id(t, spm, "<tool>")) || spm.IsEOG(1) || spm.IsEOG(-1) || spm.IsEOG(1<<30) {
		t.Error("spm: control/EOG flags wrong")
	}
	if spm.Attr(id(t, spm, "<tool>")) != AttrUserDefined || spm.Attr(3) != AttrByte || spm.Attr(-5) != AttrUndefined {
		t.Errorf("spm attrs: %v %v", spm.Attr(id(t, spm, "<tool>")), spm.Attr(3))
	}

	phi := goldenByName(t, "spm-phi3")
	if phi.EOT() != 260 || !phi.AddEOS() || phi.AddSpacePrefix() {
		t.Errorf("phi3: eot %d addEOS %v prefix %v", phi.EOT(), phi.AddEOS(), phi.AddSpacePrefix())
	}
	if phi.Attr(id(t, phi, "<|im_end|>"))&AttrRStrip == 0 || phi.Attr(1)&AttrRStrip != 0 || phi.Attr(2)&AttrRStrip == 0 {
		t.Error("phi3: rstrip attributes wrong")
	}

	l3 := goldenByName(t, "bpe-llama3")
	if l3.Model() != "gpt2" || l3.Pre() != "llama-bpe" || !l3.AddBOS() || l3.AddEOS() {
		t.Errorf("llama3: model %q pre %q addBOS %v", l3.Model(), l3.Pre(), l3.AddBOS())
	}
	if l3.BOS() != id(t, l3, "<|begin_of_text|>") || l3.EOS() != id(t, l3, "<|end_of_text|>") || l3.EOT() != id(t, l3, "<|eot_id|>") {
		t.Errorf("llama3: bos %d eos %d eot %d", l3.BOS(), l3.EOS(), l3.EOT())
	}
	for _, s := range []string{"<|eot_id|>", "<|im_end|>", "<|endoftext|>", "<|end_of_text|>"} {
		if !l3.IsEOG(id(t, l3, s)) {
			t.Errorf("llama3: %s is not EOG", s)
		}
	}
	if l3.IsEOG(id(t, l3, "<|im_start|>")) {
		t.Error("llama3: <|im_start|> is EOG")
	}
	q := goldenByName(t, "bpe-qwen2")
	if q.AddBOS() || q.BOS() != 11 { // llama.cpp's BPE default BOS id
		t.Errorf("qwen2: addBOS %v bos %d", q.AddBOS(), q.BOS())
	}
	if g := goldenByName(t, "bpe-gpt2"); !g.AddBOS() || g.BOS() != id(t, g, "<|endoftext|>") {
		t.Errorf("gpt-2: addBOS %v bos %d", g.AddBOS(), g.BOS())
	}
}

func TestPiece(t *testing.T) {
	spm := goldenByName(t, "spm")
	for _, c := range []struct {
		id      int32
		special bool
		want    string
	}{
		{3 + 0x41, false, "A"},
		{3 + 0xE4, false, "\xe4"},
		{1, false, ""},
		{1, true, "<s>"},
		{0, false, ""},
		{0, true, "<unk>"},
		{id(t, spm, "<tool>"), false, "<tool>"},
		{id(t, spm, "▁the"), false, " the"},
		{id(t, spm, "▁▁▁▁"), true, "    "},
	} {
		got, err := spm.Piece(c.id, c.special)
		if err != nil || string(got) != c.want {
			t.Errorf("spm Piece(%d, %v) = %q, %v; want %q", c.id, c.special, got, err, c.want)
		}
	}
	bpe := goldenByName(t, "bpe-gpt2")
	if got, _ := bpe.Piece(id(t, bpe, "Ġ"), false); string(got) != " " {
		t.Errorf("bpe Piece(Ġ) = %q", got)
	}
	if got, _ := bpe.Piece(id(t, bpe, "Ġhippopotamus"), false); string(got) != " hippopotamus" {
		t.Errorf("bpe Piece(Ġhippopotamus) = %q", got)
	}
	if got, _ := bpe.Piece(id(t, bpe, string(byteToRune[0xC3])), false); string(got) != "\xc3" {
		t.Errorf("bpe Piece(0xC3) = %q", got)
	}
	for _, bad := range []int32{-1, int32(spm.Len()), 1 << 30} {
		if _, err := spm.Piece(bad, true); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("Piece(%d): %v", bad, err)
		}
	}
}

func TestEncodeDetokenize(t *testing.T) {
	spm := goldenByName(t, "spm")
	// "▁Hello" has no merge path ("▁Hel", "ello" are not pieces); the highest scores decide
	ids, err := spm.Tokenize("Hello world", true)
	if err != nil {
		t.Fatal(err)
	}
	want := []int32{1, id(t, spm, "▁H"), id(t, spm, "e"), id(t, spm, "llo"), id(t, spm, "▁world")}
	if !equalIDs(ids, want) {
		t.Errorf("spm Hello world: %v, want %v", ids, want)
	}
	// BOS renders as nothing but takes the first-token space strip, as in llama.cpp
	if got := spm.Detokenize(ids); got != " Hello world" {
		t.Errorf("spm Detokenize = %q", got)
	}
	if got := spm.Detokenize(ids[1:]); got != "Hello world" {
		t.Errorf("spm Detokenize = %q", got)
	}
	// llama.cpp keeps the space when it removes the BOS
	if got := spm.DetokenizeWith(ids, true, false); got != " Hello world" {
		t.Errorf("spm DetokenizeWith(remove special) = %q", got)
	}
	if got := spm.DetokenizeWith(ids, false, true); got != "<s> Hello world" {
		t.Errorf("spm DetokenizeWith(unparse) = %q", got)
	}
	// the space prefix is stripped from the first token only, even after a control token
	if got := spm.Detokenize([]int32{id(t, spm, "▁world"), id(t, spm, "▁world")}); got != "world world" {
		t.Errorf("spm Detokenize = %q", got)
	}
	// special text parsed only with parseSpecial; user-defined tokens always
	im := id(t, spm, "<|im_start|>")
	tool := id(t, spm, "<tool>")
	withSpecial, _ := spm.Encode("<|im_start|><tool>", false, true)
	noSpecial, _ := spm.Encode("<|im_start|><tool>", false, false)
	if !equalIDs(withSpecial, []int32{im, tool}) || containsID(noSpecial, im) || !containsID(noSpecial, tool) {
		t.Errorf("special parsing: %v / %v", withSpecial, noSpecial)
	}
	if ids, err := spm.Encode("", true, true); err != nil || !equalIDs(ids, []int32{1}) {
		t.Errorf("empty text: %v %v", ids, err)
	}
	// bytes outside the vocabulary fall back to <0xNN>
	if ids, _ := spm.Encode("\xff", false, false); !equalIDs(ids, []int32{id(t, spm, "▁"), 3 + 0xFF}) {
		t.Errorf("byte fallback: %v", ids)
	}
	bpe := goldenByName(t, "bpe-gpt2")
	for _, text := range []string{"Hello world", "über straße 🦙", "a\tb\n\nc  d"} {
		ids, err := bpe.Encode(text, false, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := bpe.Detokenize(ids); got != text {
			t.Errorf("bpe round trip %q -> %v -> %q", text, ids, got)
		}
	}
	// clean_up_tokenization_spaces
	ids, _ = bpe.Encode("a , b . c 's", false, false)
	if got := bpe.Detokenize(ids); got != "a, b. c's" {
		t.Errorf("clean spaces: %q", got)
	}
	if got := bpe.Detokenize([]int32{-1, int32(bpe.Len()), id(t, bpe, "a")}); got != "a" {
		t.Errorf("out-of-range ids: %q", got)
	}
}

func containsID(ids []int32, x int32) bool {
	for _, i := range ids {
		if i == x {
			return true
		}
	}
	return false
}

func TestCleanSpaces(t *testing.T) {
	for in, want := range map[string]string{
		"":                  "",
		"a , b ! c ? d .":   "a, b! c? d.",
		"x ' y":             "x'y",
		"x ' ' y":           "x'' y", // the second apostrophe sees the first one's NUL marker
		"it 's I 'm we 're": "it's I'm we're",
		"don 't we 've 'd":  "don 't we've 'd",
		" , ":               ", ",
	} {
		if got := string(cleanSpaces([]byte(in))); got != want {
			t.Errorf("cleanSpaces(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDecoder(t *testing.T) {
	spm := goldenByName(t, "spm")
	d := spm.NewDecoder()
	var got []string
	for _, b := range []byte("🦙") {
		s, err := d.Add(3 + int32(b))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if fmt.Sprintf("%q", got) != `["" "" "" "🦙"]` {
		t.Errorf("decoder: %q", got)
	}
	if s, _ := d.Add(id(t, spm, "▁the")); s != " the" {
		t.Errorf("decoder: %q", s)
	}
	if s, _ := d.Add(1); s != "" { // control tokens give nothing
		t.Errorf("decoder control: %q", s)
	}
	d.Add(3 + 0xE4)
	d.Add(3 + 0xBD)
	if _, err := d.Add(-1); err == nil {
		t.Error("decoder accepted id -1")
	}
	if s := d.Flush(); s != "\uFFFD" {
		t.Errorf("flush: %q", s)
	}
	if s, _ := d.Add(3 + 0xFF); s != "\uFFFD" {
		t.Errorf("invalid byte: %q", s)
	}
	if s, _ := d.Add(3 + 0xE4); s != "" {
		t.Errorf("held byte: %q", s)
	}
	if s, _ := d.Add(3 + 'a'); s != "\uFFFDa" {
		t.Errorf("broken sequence: %q", s)
	}
}

func TestOpenFile(t *testing.T) {
	g := goldenVocabs()[2]
	b, err := ggufBytes(g.md)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v.gguf")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if v.Pre() != "llama-bpe" {
		t.Errorf("pre %q", v.Pre())
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.gguf")); err == nil {
		t.Error("Open of a missing file succeeded")
	}
}

func TestConcurrentEncode(t *testing.T) {
	v := goldenByName(t, "bpe-llama3")
	want, _ := v.Tokenize(goldenTexts[10], true)
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				got, _ := v.Tokenize(goldenTexts[10], true)
				if !equalIDs(got, want) {
					errs <- fmt.Sprint(got)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error("concurrent Tokenize differs:", e)
	}
}

// smallMD is a minimal valid vocabulary that the error tests break one key at a time.
func smallMD(model string) *gguf.Metadata {
	md := &gguf.Metadata{}
	mustSet(md, keyModel, model)
	if model == ModelBPE {
		mustSet(md, keyPre, "gpt-2")
		mustSet(md, keyTokens, []string{"a", "b", "ab", "Ġ"})
		mustSet(md, keyMerges, []string{"a b"})
	} else {
		mustSet(md, keyTokens, []string{"<unk>", "<s>", "</s>", "▁a"})
		mustSet(md, keyScores, []float32{0, 0, 0, -1})
		mustSet(md, keyTokenType, []int32{2, 3, 3, 1})
	}
	return md
}

func TestFromGGUFErrors(t *testing.T) {
	if _, err := FromGGUF(smallMD(ModelSPM)); err != nil {
		t.Fatalf("valid spm: %v", err)
	}
	if _, err := FromGGUF(smallMD(ModelBPE)); err != nil {
		t.Fatalf("valid bpe: %v", err)
	}
	for _, c := range []struct {
		name  string
		model string
		edit  func(md *gguf.Metadata)
		want  string
	}{
		{"no model", ModelSPM, func(md *gguf.Metadata) { md.Delete(keyModel) }, "tokenizer.ggml.model"},
		{"bert", "bert", nil, `tokenizer model "bert" is not supported`},
		{"pre", ModelBPE, func(md *gguf.Metadata) { mustSet(md, keyPre, "bloom") }, `pre-tokenizer "bloom" is not supported (supported: `},
		{"no tokens", ModelSPM, func(md *gguf.Metadata) { md.Delete(keyTokens) }, "tokenizer.ggml.tokens"},
		{"empty tokens", ModelSPM, func(md *gguf.Metadata) { mustSet(md, keyTokens, []string{}) }, "is empty"},
		{"token type", ModelSPM, func(md *gguf.Metadata) { mustSet(md, keyTokens, []int32{1}) }, "tokenizer.ggml.tokens"},
		{"short scores", ModelSPM, func(md *gguf.Metadata) { mustSet(md, keyScores, []float32{0}) }, "scores has 1 entries for 4 tokens"},
		{"score type", ModelSPM, func(md *gguf.Metadata) { mustSet(md, keyScores, []string{"x"}) }, "not an array of f32"},
		{"short types", ModelSPM, func(md *gguf.Metadata) { mustSet(md, keyTokenType, []int32{1, 1}) }, "token_type has 2 entries"},
		{"no merges", ModelBPE, func(md *gguf.Metadata) { md.Delete(keyMerges) }, "tokenizer.ggml.merges"},
		{"merge unknown", ModelBPE, func(md *gguf.Metadata) { mustSet(md, keyMerges, []string{"a c"}) }, `names "c", which is not a token`},
		{"merge no space", ModelBPE, func(md *gguf.Metadata) { mustSet(md, keyMerges, []string{"ab"}) }, "has no space"},
		{"bos type", ModelSPM, func(md *gguf.Metadata) { mustSet(md, keyBOS, "1") }, "bos_token_id"},
		{"add_bos type", ModelSPM, func(md *gguf.Metadata) { mustSet(md, keyAddBOS, uint32(1)) }, "add_bos_token"},
	} {
		md := smallMD(c.model)
		if c.edit != nil {
			c.edit(md)
		}
		_, err := FromGGUF(md)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to mention %q", c.name, err, c.want)
		}
	}
	if _, err := FromGGUF(nil); err == nil {
		t.Error("nil metadata accepted")
	}
}

func TestEdgeVocabularies(t *testing.T) {
	// ids from the file outside the vocabulary keep the default; defaults outside it are cleared
	md := smallMD(ModelSPM)
	mustSet(md, keyBOS, uint32(99))
	mustSet(md, keyEOS, int32(-3))
	v, err := FromGGUF(md)
	if err != nil {
		t.Fatal(err)
	}
	if v.BOS() != 1 || v.EOS() != 2 {
		t.Errorf("bos %d eos %d", v.BOS(), v.EOS())
	}
	// no byte fallback: an error, not a panic
	if _, err := v.Encode("z", false, false); err == nil || !strings.Contains(err.Error(), "no token for byte") {
		t.Errorf("missing byte token: %v", err)
	}
	// BPE default BOS 11 is outside a 4-token vocabulary: cleared, and adding it is an error
	md = smallMD(ModelBPE)
	mustSet(md, keyAddBOS, true)
	v, err = FromGGUF(md)
	if err != nil {
		t.Fatal(err)
	}
	if v.BOS() != -1 || v.EOS() != -1 || v.EOT() != -1 {
		t.Errorf("bos %d eos %d eot %d", v.BOS(), v.EOS(), v.EOT())
	}
	if _, err := v.Encode("ab", true, true); err == nil {
		t.Error("absent BOS added")
	}
	if ids, err := v.Encode("ab ab", false, false); err != nil || !equalIDs(ids, []int32{2, 3, 2}) {
		t.Errorf("bpe ab ab: %v %v", ids, err)
	}
	// a codepoint past U+10FFFF (lead byte F5..F7) has no UTF-8 form for the byte-level word
	if _, err := v.Encode("\xf7\xbf\xbf\xbf", false, false); err == nil {
		t.Error("codepoint past U+10FFFF accepted")
	}
	// empty token texts become [EMPTY_i]
	md = smallMD(ModelSPM)
	mustSet(md, keyTokens, []string{"<unk>", "<s>", "", "▁a"})
	if v, err = FromGGUF(md); err != nil || v.Text(2) != "[EMPTY_2]" {
		t.Errorf("empty token: %q %v", v.Text(2), err)
	}
}

func TestSupportedPre(t *testing.T) {
	names := strings.Join(SupportedPre(), " ")
	for _, n := range []string{"llama3", "llama-bpe", "qwen2", "gpt-2", "default", "falcon", "starcoder", "deepseek-coder"} {
		if !strings.Contains(" "+names+" ", " "+n+" ") {
			t.Errorf("%s not in SupportedPre: %s", n, names)
		}
	}
}
