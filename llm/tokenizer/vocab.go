// Package tokenizer turns text into the token ids of a GGUF model and back, token for token as
// llama.cpp does (src/llama-vocab.cpp and src/unicode.cpp).
//
// Two vocabulary types are implemented: SentencePiece-style (tokenizer.ggml.model = "llama":
// merges by highest score, byte fallback tokens <0xNN>, spaces escaped to U+2581 and a space
// prefix) and byte-level BPE (tokenizer.ggml.model = "gpt2": merge ranks from tokenizer.ggml.merges
// over GPT-2's byte-to-unicode alphabet, words cut by the pre-tokenizer that tokenizer.ggml.pre
// names; see SupportedPre). Special tokens (control, user-defined, unknown) are found in text
// longest first, as llama.cpp's tokenizer_st_partition finds them.
//
//	v, err := tokenizer.Open("model.gguf")
//	ids, err := v.Tokenize("Hello world", true) // BOS added where the model asks for it
//	text := v.Detokenize(ids)
//
// A Vocab is immutable once loaded and safe for concurrent use.
package tokenizer

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/gguf"
)

// Attr is a token's attribute set, with llama.cpp's llama_token_attr bit values.
type Attr uint32

// Token attributes.
const (
	AttrUndefined   Attr = 0
	AttrUnknown     Attr = 1 << 0
	AttrUnused      Attr = 1 << 1
	AttrNormal      Attr = 1 << 2
	AttrControl     Attr = 1 << 3
	AttrUserDefined Attr = 1 << 4
	AttrByte        Attr = 1 << 5
	AttrNormalized  Attr = 1 << 6
	AttrLStrip      Attr = 1 << 7
	AttrRStrip      Attr = 1 << 8
	AttrSingleWord  Attr = 1 << 9
)

// GGUF token types (tokenizer.ggml.token_type values).
const (
	typeUndefined   = 0
	typeNormal      = 1
	typeUnknown     = 2
	typeControl     = 3
	typeUserDefined = 4
	typeUnused      = 5
	typeByte        = 6
)

// Model values of tokenizer.ggml.model.
const (
	ModelSPM = "llama" // SentencePiece-style
	ModelBPE = "gpt2"  // byte-level BPE
)

// Metadata keys read by FromGGUF.
const (
	keyModel      = "tokenizer.ggml.model"
	keyPre        = "tokenizer.ggml.pre"
	keyTokens     = "tokenizer.ggml.tokens"
	keyTokenType  = "tokenizer.ggml.token_type"
	keyScores     = "tokenizer.ggml.scores"
	keyMerges     = "tokenizer.ggml.merges"
	keyAddBOS     = "tokenizer.ggml.add_bos_token"
	keyAddEOS     = "tokenizer.ggml.add_eos_token"
	keyAddPrefix  = "tokenizer.ggml.add_space_prefix"
	keyName       = "general.name"
	keyArch       = "general.architecture"
	keyBOS        = "tokenizer.ggml.bos_token_id"
	keyEOS        = "tokenizer.ggml.eos_token_id"
	keyEOT        = "tokenizer.ggml.eot_token_id"
	keyEOM        = "tokenizer.ggml.eom_token_id"
	keyUNK        = "tokenizer.ggml.unknown_token_id"
	keySEP        = "tokenizer.ggml.seperator_token_id" // sic, as llama.cpp spells it
	keyPAD        = "tokenizer.ggml.padding_token_id"
	keyMASK       = "tokenizer.ggml.mask_token_id"
	keyFIMPre     = "tokenizer.ggml.fim_pre_token_id"
	keyFIMSuf     = "tokenizer.ggml.fim_suf_token_id"
	keyFIMMid     = "tokenizer.ggml.fim_mid_token_id"
	keyFIMPad     = "tokenizer.ggml.fim_pad_token_id"
	keyFIMRep     = "tokenizer.ggml.fim_rep_token_id"
	keyFIMSep     = "tokenizer.ggml.fim_sep_token_id"
	keyPrefixOld  = "tokenizer.ggml.prefix_token_id"
	keySuffixOld  = "tokenizer.ggml.suffix_token_id"
	keyMiddleOld  = "tokenizer.ggml.middle_token_id"
	maxVocabSize  = math.MaxInt32
	nullToken     = int32(-1)
	emptyTokenFmt = "[EMPTY_%d]"
)

type tokenData struct {
	text  string
	score float32
	attr  Attr
}

type mergePair struct{ left, right string }

// Vocab is a loaded tokenizer. It is immutable after loading and safe for concurrent use.
type Vocab struct {
	model, pre string
	bpe        bool
	preTok     *preTokenizer

	tokens []tokenData
	ids    map[string]int32
	ranks  map[mergePair]int

	bos, eos, eot, eom, unk, sep, pad, mask        int32
	fimPre, fimSuf, fimMid, fimPad, fimRep, fimSep int32

	addSpacePrefix bool
	addBOS, addEOS bool
	ignoreMerges   bool
	cleanSpaces    bool

	eog     map[int32]bool
	special []int32  // control, user-defined and unknown tokens, longest text first
	pieces  [][]byte // token_to_piece(special = true) per id
}

// Open reads the tokenizer of a GGUF file (a vocab-only file works).
func Open(path string) (*Vocab, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v, err := FromGGUF(&f.Metadata)
	if err != nil {
		return nil, core.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// FromGGUF builds a Vocab from the tokenizer.ggml.* keys of a GGUF file's metadata, deciding the
// defaults (BOS/EOS ids, add_bos, add_eos, space prefix, end-of-generation set, special token
// attributes) as llama.cpp's llama_vocab::load does. Missing or mistyped keys, arrays of
// mismatched lengths, merges that name unknown tokens and unsupported models or pre-tokenizers are
// errors.
func FromGGUF(md *gguf.Metadata) (*Vocab, error) {
	if md == nil {
		return nil, fmt.Errorf("tandem: tokenizer: nil metadata")
	}
	model, err := md.GetString(keyModel)
	if err != nil {
		return nil, core.Errorf("tandem: tokenizer: %w", err)
	}
	v := &Vocab{model: model, eot: nullToken, eom: nullToken, sep: nullToken, pad: nullToken, mask: nullToken,
		fimPre: nullToken, fimSuf: nullToken, fimMid: nullToken, fimPad: nullToken, fimRep: nullToken, fimSep: nullToken}
	if md.Has(keyPre) {
		if v.pre, err = md.GetString(keyPre); err != nil {
			return nil, core.Errorf("tandem: tokenizer: %w", err)
		}
	}
	switch model {
	case ModelSPM:
		v.bos, v.eos, v.unk = 1, 2, 0
		v.addSpacePrefix, v.addBOS = true, true
	case ModelBPE:
		v.bpe = true
		v.bos, v.eos, v.unk = 11, 11, nullToken
		if v.preTok, err = lookupPre(v.pre); err != nil {
			return nil, err
		}
		v.ignoreMerges, v.addBOS, v.cleanSpaces = v.preTok.ignoreMerges, v.preTok.addBOS, v.preTok.cleanSpaces
		if v.preTok.noBOS {
			v.bos = nullToken
		}
	default:
		return nil, fmt.Errorf("tandem: tokenizer: tokenizer model %q is not supported (supported: %q, %q)", model, ModelSPM, ModelBPE)
	}
	if err := getBool(md, keyAddPrefix, &v.addSpacePrefix); err != nil {
		return nil, err
	}

	if err := v.loadTokens(md); err != nil {
		return nil, err
	}
	if v.bpe {
		if err := v.loadMerges(md); err != nil {
			return nil, err
		}
	}
	if err := v.loadSpecialIDs(md); err != nil {
		return nil, err
	}
	if err := getBool(md, keyAddBOS, &v.addBOS); err != nil {
		return nil, err
	}
	if err := getBool(md, keyAddEOS, &v.addEOS); err != nil {
		return nil, err
	}
	v.detectByText()
	v.buildSpecialCache()
	v.buildPieces()
	if err := v.modelAttrs(md); err != nil {
		return nil, err
	}
	return v, nil
}

func getBool(md *gguf.Metadata, key string, dst *bool) error {
	if !md.Has(key) {
		return nil
	}
	b, err := md.GetBool(key)
	if err != nil {
		return core.Errorf("tandem: tokenizer: %w", err)
	}
	*dst = b
	return nil
}

func (v *Vocab) loadTokens(md *gguf.Metadata) error {
	texts, err := md.GetStrings(keyTokens)
	if err != nil {
		return core.Errorf("tandem: tokenizer: %w", err)
	}
	n := len(texts)
	if n == 0 {
		return fmt.Errorf("tandem: tokenizer: %s is empty", keyTokens)
	}
	if n > maxVocabSize {
		return fmt.Errorf("tandem: tokenizer: %d tokens is more than token ids can number", n)
	}
	var scores []float32
	if md.Has(keyScores) {
		switch s := mustLookup(md, keyScores).(type) {
		case []float32:
			scores = s
		case []int32:
			scores = make([]float32, len(s))
			for i, x := range s {
				scores[i] = float32(x)
			}
		default:
			return fmt.Errorf("tandem: tokenizer: %s is %T, not an array of f32 or i32", keyScores, s)
		}
		if len(scores) < n {
			return fmt.Errorf("tandem: tokenizer: %s has %d entries for %d tokens", keyScores, len(scores), n)
		}
	}
	var types []int32
	if md.Has(keyTokenType) {
		if types, err = md.GetInt32s(keyTokenType); err != nil {
			return core.Errorf("tandem: tokenizer: %w", err)
		}
		if len(types) < n {
			return fmt.Errorf("tandem: tokenizer: %s has %d entries for %d tokens", keyTokenType, len(types), n)
		}
	}
	v.tokens = make([]tokenData, n)
	v.ids = make(map[string]int32, n)
	for i, text := range texts {
		if text == "" {
			text = fmt.Sprintf(emptyTokenFmt, i)
		}
		t := &v.tokens[i]
		t.text = text
		v.ids[text] = int32(i) // a repeated text resolves to its last id, as in llama.cpp
		if scores != nil {
			t.score = scores[i]
		}
		t.attr = AttrNormal
		if types != nil {
			t.attr = attrOfType(types[i])
		}
	}
	return nil
}

func mustLookup(md *gguf.Metadata, key string) any { x, _ := md.Lookup(key); return x }

func attrOfType(t int32) Attr {
	switch t {
	case typeUnknown:
		return AttrUnknown
	case typeUnused:
		return AttrUnused
	case typeNormal:
		return AttrNormal
	case typeControl:
		return AttrControl
	case typeUserDefined:
		return AttrUserDefined
	case typeByte:
		return AttrByte
	}
	return AttrUndefined
}

func (v *Vocab) loadMerges(md *gguf.Metadata) error {
	merges, err := md.GetStrings(keyMerges)
	if err != nil {
		return core.Errorf("tandem: tokenizer: bpe vocabulary: %w", err)
	}
	v.ranks = make(map[mergePair]int, len(merges))
	for i, m := range merges {
		// the separator is the first space after the first byte, so a merge may start with one
		sp := -1
		if len(m) > 1 {
			if j := strings.IndexByte(m[1:], ' '); j >= 0 {
				sp = j + 1
			}
		}
		if sp < 0 {
			return fmt.Errorf("tandem: tokenizer: merge %d %q has no space between its two parts", i, m)
		}
		p := mergePair{m[:sp], m[sp+1:]}
		for _, part := range []string{p.left, p.right} {
			if _, ok := v.ids[part]; !ok {
				return fmt.Errorf("tandem: tokenizer: merge %d %q names %q, which is not a token", i, m, part)
			}
		}
		if _, dup := v.ranks[p]; !dup {
			v.ranks[p] = i
		}
	}
	return nil
}

// loadSpecialIDs applies the special token ids of the metadata over the defaults. A default id
// outside the vocabulary is cleared; an id from the file outside it is ignored (llama.cpp warns).
func (v *Vocab) loadSpecialIDs(md *gguf.Metadata) error {
	n := int64(len(v.tokens))
	for _, s := range []struct {
		key string
		id  *int32
	}{
		{keyBOS, &v.bos}, {keyEOS, &v.eos}, {keyEOT, &v.eot}, {keyEOM, &v.eom}, {keyUNK, &v.unk},
		{keySEP, &v.sep}, {keyPAD, &v.pad}, {keyMASK, &v.mask},
		{keyFIMPre, &v.fimPre}, {keyFIMSuf, &v.fimSuf}, {keyFIMMid, &v.fimMid},
		{keyFIMPad, &v.fimPad}, {keyFIMRep, &v.fimRep}, {keyFIMSep, &v.fimSep},
		{keyPrefixOld, &v.fimPre}, {keySuffixOld, &v.fimSuf}, {keyMiddleOld, &v.fimMid},
	} {
		if *s.id >= 0 && int64(*s.id) >= n {
			*s.id = nullToken
		}
		if !md.Has(s.key) {
			continue
		}
		id, err := getID(md, s.key)
		if err != nil {
			return err
		}
		if id >= 0 && id < n {
			*s.id = int32(id)
		}
	}
	return nil
}

// getID reads an integer key of any GGUF integer type (llama.cpp writes u32).
func getID(md *gguf.Metadata, key string) (int64, error) {
	switch x := mustLookup(md, key).(type) {
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint64:
		if x > math.MaxInt64 {
			return -1, nil
		}
		return int64(x), nil
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	default:
		return 0, fmt.Errorf("tandem: tokenizer: %s is %T, not an integer", key, x)
	}
}

// eotTexts and the lists below are the token texts llama.cpp recognizes when the metadata does
// not name the token.
var (
	eotTexts    = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"}
	eomTexts    = []string{"<|eom_id|>"}
	fimPreTexts = []string{"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>"}
	fimSufTexts = []string{"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>"}
	fimMidTexts = []string{"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>"}
	fimPadTexts = []string{"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}
	fimRepTexts = []string{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}
	fimSepTexts = []string{"<|file_sep|>"}
	eogTexts    = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~["}
	alwaysShown = []string{"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}
)

// byTextDesc returns the ids whose texts are in list, highest id first. llama.cpp walks its
// text-to-id hash map, whose order follows insertion in reverse for such small sets; where several
// texts match, the highest id is the one it picks in the vocabularies checked (Llama 3, Qwen 2,
// Phi-3).
func (v *Vocab) byTextDesc(list []string) []int32 {
	var out []int32
	for _, t := range list {
		if id, ok := v.ids[t]; ok {
			out = append(out, id)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] > out[j] })
	return out
}

// detectByText finds EOT, EOM and FIM tokens by text where the metadata does not name them, marks
// them control, marks control tokens named "unused", and builds the end-of-generation set.
func (v *Vocab) detectByText() {
	for _, d := range []struct {
		id    *int32
		texts []string
	}{
		{&v.eot, eotTexts}, {&v.eom, eomTexts}, {&v.fimPre, fimPreTexts}, {&v.fimSuf, fimSufTexts},
		{&v.fimMid, fimMidTexts}, {&v.fimPad, fimPadTexts}, {&v.fimRep, fimRepTexts}, {&v.fimSep, fimSepTexts},
	} {
		if *d.id != nullToken {
			continue
		}
		if ids := v.byTextDesc(d.texts); len(ids) > 0 {
			*d.id = ids[0]
			v.tokens[ids[0]].attr |= AttrControl
		}
	}
	for i := range v.tokens {
		t := &v.tokens[i]
		if t.attr&AttrControl != 0 && strings.Contains(t.text, "unused") {
			t.attr |= AttrUnused
		}
	}
	v.eog = map[int32]bool{}
	for _, id := range []int32{v.fimPad, v.fimRep, v.fimSep} {
		if id != nullToken {
			v.eog[id] = true
		}
	}
	for _, id := range v.byTextDesc(eogTexts) {
		v.eog[id] = true
		v.tokens[id].attr |= AttrControl
	}
	for _, t := range alwaysShown {
		if id, ok := v.ids[t]; ok {
			v.tokens[id].attr = AttrUserDefined
		}
	}
	for _, id := range []int32{v.eos, v.eot, v.eom} {
		if id != nullToken {
			v.eog[id] = true
		}
	}
	// gpt-oss (harmony) and solar-open: "<|end|>" ends a message, not the generation
	has := map[string]int32{}
	for id := range v.eog {
		has[v.tokens[id].text] = id
	}
	_, ret := has["<|return|>"]
	_, call := has["<|call|>"]
	_, calls := has["<|calls|>"]
	_, flush := has["<|flush|>"]
	if end, ok := has["<|end|>"]; ok && ((ret && (call || calls)) || ((call || calls) && flush)) {
		delete(v.eog, end)
		v.tokens[end].attr = AttrUserDefined
	}
	// gemma4 and paddleocr: "</s>" is not an end of generation there
	if s, ok := has["</s>"]; ok {
		if _, tr := has["<|tool_response>"]; tr {
			delete(v.eog, s)
			v.tokens[s].attr = AttrNormal
		}
	}
}

// buildSpecialCache lists the tokens that tokenizer_st_partition looks for in text, longest text
// first. Ties keep id order (llama.cpp's std::sort leaves their order unspecified; it matters
// only for overlapping special texts of equal length).
func (v *Vocab) buildSpecialCache() {
	for id, t := range v.tokens {
		if t.attr&(AttrControl|AttrUserDefined|AttrUnknown) != 0 {
			v.special = append(v.special, int32(id))
		}
	}
	sort.SliceStable(v.special, func(i, j int) bool {
		return len(v.tokens[v.special[i]].text) > len(v.tokens[v.special[j]].text)
	})
}

// modelAttrs sets the per-model lstrip/rstrip attributes llama.cpp assigns by name.
func (v *Vocab) modelAttrs(md *gguf.Metadata) error {
	str := func(key string) string {
		s, _ := md.GetString(key)
		return s
	}
	name := strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, str(keyName))
	pre, arch := str(keyPre), str(keyArch)
	containsAny := func(s string, subs ...string) bool {
		for _, sub := range subs {
			if strings.Contains(s, sub) {
				return true
			}
		}
		return false
	}
	set := func(text string, a Attr, on bool) {
		id, ok := v.ids[text]
		if !ok {
			return
		}
		if on {
			v.tokens[id].attr |= a
		} else {
			v.tokens[id].attr &^= a
		}
	}
	switch {
	case containsAny(pre, "jina-v2-de", "jina-v2-es", "jina-v2-code") || containsAny(arch, "nomic-bert-moe", "jina-bert-v3"):
		set("<mask>", AttrLStrip, true)
	case containsAny(name, "phi-3", "phi3"):
		for _, id := range v.special {
			v.tokens[id].attr |= AttrRStrip
		}
		set("</s>", AttrRStrip, true)
		for _, t := range []string{"<unk>", "<s>", "<|endoftext|>"} {
			set(t, AttrRStrip, false)
		}
	case containsAny(name, "modern-bert"):
		set("[MASK]", AttrLStrip, true)
	}
	return nil
}
