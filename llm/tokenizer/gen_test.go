package tokenizer

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/tandem-ml/tandem/core/gguf"
)

// Deterministic test vocabularies. The golden ids in testdata/golden.txt were produced by
// llama.cpp's llama-tokenize on the GGUF files these functions write (see testdata/README.md);
// every change here changes the files, which the golden test notices by their SHA-256.

// goldenVocab is one generated vocabulary.
type goldenVocab struct {
	name string
	md   *gguf.Metadata
}

func mustSet(md *gguf.Metadata, key string, v any) {
	if err := md.Set(key, v); err != nil {
		panic(err) // test-only generator with fixed keys
	}
}

// spmPieces are the normal pieces of the SPM test vocabularies beyond single characters.
var spmPieces = []string{
	"▁t", "he", "▁the", "▁a", "in", "er", "▁w", "or", "ld", "▁wor", "▁world", "▁H", "el", "lo", "ll", "llo",
	"▁Hello", "Hello", "▁is", "is", "▁it", "'s", "'t", "▁don", "re", "▁you", "'re", "▁I", "'m", "12", "123",
	"▁1", "▁▁", "▁▁▁", "▁▁▁▁", "▁你", "你好", "世界", "▁caf", "▁na", "ve", "▁re", "su", "sum", "▁The",
	"▁qu", "ick", "▁quick", "▁b", "ro", "wn", "▁brown", "an", "▁an", "▁and", "on", "▁on", "at", "▁at",
	"ing", "▁test", "es", "st", "▁te", "\n", "\n\n", "▁\n", "on't", "'ll", "'ve", "'d", "▁we", "▁they",
	"ey", "th", "▁th", "▁de", "▁def", "▁main", "ma", "ai", "()", "():", "▁return", "et", "ur", "rn",
	"▁42", "42", "00", "000", "▁2", "02", "20", "24", "▁3", ".1", "14", "59", "▁Ñ", "and", "ú", "▁ñ",
}

// spmSingles are the single characters of the SPM test vocabularies.
const spmSingles = "▁abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,!?'\"-:;()<>/|_你好世界模型我是éñüï"

func spmVocab(name string, phi bool) goldenVocab {
	var texts []string
	var scores []float32
	var types []int32
	seen := map[string]bool{}
	add := func(t string, score float32, typ int32) {
		if seen[t] {
			panic("duplicate SPM test piece " + t) // llama.cpp asserts token texts are unique
		}
		seen[t] = true
		texts = append(texts, t)
		scores = append(scores, score)
		types = append(types, typ)
	}
	add("<unk>", 0, typeUnknown)
	add("<s>", 0, typeControl)
	add("</s>", 0, typeControl)
	for b := range 256 {
		add(fmt.Sprintf("<0x%02X>", b), 0, typeByte)
	}
	add("<|im_start|>", 0, typeControl)
	add("<|im_end|>", 0, typeControl)
	add("<|endoftext|>", 0, typeControl)
	add("<tool>", 0, typeUserDefined)
	add("</tool>", 0, typeUserDefined)
	i := 0
	for _, r := range spmSingles {
		add(string(r), float32(-1000-i), typeNormal)
		i++
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range spmPieces {
		// quarter steps make ties between candidate merges, which llama.cpp breaks leftmost first
		add(p, -float32(rng.IntN(400))/4, typeNormal)
	}
	md := &gguf.Metadata{}
	mustSet(md, "general.architecture", "llama")
	if phi {
		mustSet(md, "general.name", "Phi-3 test")
	} else {
		mustSet(md, "general.name", "spm test")
	}
	mustSet(md, keyModel, ModelSPM)
	mustSet(md, keyPre, "default")
	mustSet(md, keyTokens, texts)
	mustSet(md, keyScores, scores)
	mustSet(md, keyTokenType, types)
	mustSet(md, keyBOS, uint32(1))
	mustSet(md, keyEOS, uint32(2))
	mustSet(md, keyUNK, uint32(0))
	if phi {
		mustSet(md, keyAddPrefix, false)
		mustSet(md, keyAddEOS, true)
		mustSet(md, keyEOT, uint32(260))
	}
	return goldenVocab{name, md}
}

// bpeCorpus trains the merges of the BPE test vocabularies.
const bpeCorpus = "Hello world! The quick brown fox jumps over the lazy dog. It's a test, isn't it? " +
	"We're here; they'll go, you'd see, I've been, I'm sure. Numbers: 12345, 3.14159, 2024-01-01, 1000000. " +
	"Café naïve résumé Ñandú. 你好世界，我是模型。 def main():\n    return 42\n\tindent\n\n" +
	"the the the and and in in on on at at that this with from hello Hello HELLO world worlds " +
	"testing tested tests    spaces  and\ttabs\r\nnewlines 000 111 222 333 123 456 789 " +
	"don't won't can't shouldn't you're they're we've I'll she'd émigré über straße 🦙 llama llamas"

// trainMerges runs byte-level BPE training on the corpus: GPT-2 words, most frequent adjacent
// pair first, ties broken by the pair's text.
func trainMerges(n int) [][2]string {
	words, err := (&preTokenizer{splitters: splitGPT2Seq}).split(bpeCorpus)
	if err != nil {
		panic(err)
	}
	counts := map[string]int{}
	for _, w := range words {
		counts[string(byteEncode(nil, []byte(w)))]++
	}
	type word struct {
		syms  []string
		count int
	}
	var ws []word
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var syms []string
		for _, r := range k {
			syms = append(syms, string(r))
		}
		ws = append(ws, word{syms, counts[k]})
	}
	var merges [][2]string
	for len(merges) < n {
		freq := map[[2]string]int{}
		for _, w := range ws {
			for i := 1; i < len(w.syms); i++ {
				freq[[2]string{w.syms[i-1], w.syms[i]}] += w.count
			}
		}
		best, bestN := [2]string{}, 0
		for p, c := range freq {
			if c > bestN || (c == bestN && (p[0] < best[0] || (p[0] == best[0] && p[1] < best[1]))) {
				best, bestN = p, c
			}
		}
		if bestN < 2 {
			break
		}
		merges = append(merges, best)
		for wi := range ws {
			s := ws[wi].syms
			var out []string
			for i := 0; i < len(s); i++ {
				if i+1 < len(s) && s[i] == best[0] && s[i+1] == best[1] {
					out = append(out, best[0]+best[1])
					i++
				} else {
					out = append(out, s[i])
				}
			}
			ws[wi].syms = out
		}
	}
	return merges
}

// bpeSpecials are the special tokens of the BPE test vocabularies (after the normal ones).
var bpeSpecials = []struct {
	text string
	typ  int32
}{
	{"<|begin_of_text|>", typeControl}, {"<|end_of_text|>", typeControl}, {"<|im_start|>", typeControl},
	{"<|im_end|>", typeControl}, {"<|endoftext|>", typeControl}, {"<|eot_id|>", typeControl},
	{"<tool_call>", typeUserDefined}, {"<|reserved_special_token_0|>", typeControl},
}

func bpeVocab(name, pre string) goldenVocab {
	var texts []string
	var types []int32
	seen := map[string]bool{}
	add := func(t string, typ int32) {
		if seen[t] {
			return
		}
		seen[t] = true
		texts = append(texts, t)
		types = append(types, typ)
	}
	for b := range 256 {
		add(string(byteToRune[b]), typeNormal)
	}
	merges := trainMerges(300)
	ms := make([]string, len(merges))
	for i, m := range merges {
		add(m[0]+m[1], typeNormal)
		ms[i] = m[0] + " " + m[1]
	}
	// whole words without a merge path: found only where the pre-tokenizer ignores merges
	add("Ġhippopotamus", typeNormal)
	add("Ġllama", typeNormal)
	special := map[string]int32{}
	for _, s := range bpeSpecials {
		special[s.text] = int32(len(texts))
		add(s.text, s.typ)
	}
	md := &gguf.Metadata{}
	mustSet(md, "general.architecture", "llama")
	mustSet(md, "general.name", "bpe test")
	mustSet(md, keyModel, ModelBPE)
	mustSet(md, keyPre, pre)
	mustSet(md, keyTokens, texts)
	mustSet(md, keyTokenType, types)
	mustSet(md, keyMerges, ms)
	switch pre {
	case "llama-bpe":
		mustSet(md, keyBOS, uint32(special["<|begin_of_text|>"]))
		mustSet(md, keyEOS, uint32(special["<|end_of_text|>"]))
	case "gpt-2":
		mustSet(md, keyBOS, uint32(special["<|endoftext|>"]))
		mustSet(md, keyEOS, uint32(special["<|endoftext|>"]))
		mustSet(md, keyAddBOS, true)
	case "qwen2":
		mustSet(md, keyEOS, uint32(special["<|endoftext|>"]))
		mustSet(md, keyAddBOS, false)
	}
	return goldenVocab{name, md}
}

// goldenVocabs are the generated vocabularies, in golden-file order.
func goldenVocabs() []goldenVocab {
	return []goldenVocab{
		spmVocab("spm", false),
		spmVocab("spm-phi3", true),
		bpeVocab("bpe-llama3", "llama-bpe"),
		bpeVocab("bpe-qwen2", "qwen2"),
		bpeVocab("bpe-gpt2", "gpt-2"),
		bpeVocab("bpe-default", "default"),
	}
}

// ggufBytes writes a vocabulary as a vocab-only GGUF file.
func ggufBytes(md *gguf.Metadata) ([]byte, error) {
	w := gguf.NewWriter()
	for _, kv := range md.KVs() {
		if err := w.Metadata.Set(kv.Key, kv.Value); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// goldenTexts are the texts tokenized for the golden file.
var goldenTexts = []string{
	"",
	" ",
	"  ",
	"\n",
	"\n\n\n",
	"Hello world",
	" Hello world",
	"   Hello  world   ",
	"Hello\tworld\n\tindented\r\nline",
	"The quick brown fox jumps over the lazy dog.",
	"It's a test, isn't it? We're here; they'll go, you'd see, I've been, I'M SURE, DON'T.",
	"Numbers: 1 12 123 1234 12345 1234567 3.14159 2024-01-01 -42 +7 1,000,000",
	"Café naïve résumé Ñandú émigré über straße",
	"你好世界，我是模型。 世界你好",
	"Emoji: 🦙🚀👍🏽 ❤️ 😀!",
	"def main():\n    return 42\n\n\n  # comment\n",
	"<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n",
	"<s>Hello</s> <s> x </s>",
	"call <tool>now</tool> and <tool_call>{\"a\": 1}</tool_call>",
	"<|begin_of_text|>Hi<|eot_id|><|end_of_text|>",
	"text <|endoftext|> more<|endoftext|>",
	"a hippopotamus and a llama",
	"((('''))) ... !!! ??? --- ___ <<< >>> $$$ ^^^ ~~~ ||| ``` @@@",
	"ʼn ǅ ᾈ ⅷ ½ ² ٣ ߀ ١٢٣",
	"\u00a0nbsp\u2009thin\u3000ideographic\u2028line\u0085nel",
	"a\x00b\x01c\x7f",
	"tab\t\t\ttabs   \t mixed \n \n",
	"IT'S It'S it'S it's 'S 's 'll 'LL",
}
