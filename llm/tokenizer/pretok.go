package tokenizer

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// A splitter refines a split of text: given the codepoints and the lengths of the current pieces
// (which cover cpts), it returns the lengths of the finer pieces. Pieces never cross the
// boundaries they were given.
type splitter func(cpts []rune, pieces []int) []int

// preTokenizer is one tokenizer.ggml.pre value: its splitters, run in order, and the flags
// llama.cpp sets for it.
type preTokenizer struct {
	splitters    []splitter
	ignoreMerges bool // a word that is a whole token skips the merges
	addBOS       bool // default of add_bos (before tokenizer.ggml.add_bos_token)
	cleanSpaces  bool // detokenize removes spaces before punctuation and contractions
	noBOS        bool // the default BOS id is cleared (chatglm)
}

// preGroup lists pre-tokenizer names that llama.cpp treats alike.
type preGroup struct {
	names []string
	pre   preTokenizer
}

var (
	splitGPT2Seq   = []splitter{splitGPT2}
	splitLlama3Seq = []splitter{splitLlama3}
	splitQwen2Seq  = []splitter{splitQwen2}
	splitCoderSeq  = []splitter{isolate(isNumber), splitGPT2}
	splitFalconSeq = []splitter{
		runs(func(r rune, f cptFlags) bool {
			return !f.has(flagWhitespace) && (f.has(flagPunct) || strings.ContainsRune("$+<=>^~|`", r))
		}),
		splitGPT2,
		digitTriples,
	}
	splitDefaultSeq = []splitter{
		runs(func(r rune, f cptFlags) bool {
			return !f.has(flagWhitespace) && (f.has(flagPunct) || strings.ContainsRune("$+<=>^~|", r))
		}),
		splitGPT2,
		runs(func(_ rune, f cptFlags) bool { return isNumber(f) }),
		digitTriples,
	}
	splitDeepseekCoderSeq = []splitter{
		isolate(func(f cptFlags) bool { return false }, '\r', '\n'),
		optSpaceRuns(flagLetter),
		optSpaceRuns(flagPunct),
		runs(func(r rune, _ cptFlags) bool {
			return (r >= 0x4E00 && r <= 0x9FA5) || (r >= 0x0800 && r <= 0x4E00) || (r >= 0xAC00 && r <= 0xD7FF)
		}),
		isolate(isNumber),
	}
)

// preGroups is llama.cpp's table of pre-tokenizer names (llama_vocab::impl::load) for the
// splitters implemented here.
var preGroups = []preGroup{
	{[]string{"default", ""}, preTokenizer{splitters: splitDefaultSeq, cleanSpaces: true}},
	{[]string{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano"},
		preTokenizer{splitters: splitLlama3Seq, ignoreMerges: true, addBOS: true, cleanSpaces: true}},
	{[]string{"dbrx", "smaug-bpe"}, preTokenizer{splitters: splitLlama3Seq, cleanSpaces: true}},
	{[]string{"glm4", "chatglm-bpe"}, preTokenizer{splitters: splitLlama3Seq, cleanSpaces: true, noBOS: true}},
	{[]string{"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "hunyuan", "solar-open", "grok-2"},
		preTokenizer{splitters: splitQwen2Seq}},
	{[]string{"stablelm2", "megrez"}, preTokenizer{splitters: splitQwen2Seq, cleanSpaces: true}},
	{[]string{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
		"modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe", "mpt", "olmo", "jais", "exaone4"},
		preTokenizer{splitters: splitGPT2Seq, cleanSpaces: true}},
	{[]string{"trillion", "granite-docling"}, preTokenizer{splitters: splitGPT2Seq}},
	{[]string{"starcoder", "refact", "codeshell", "exaone", "minerva-7b", "mellum2"},
		preTokenizer{splitters: splitCoderSeq, cleanSpaces: true}},
	{[]string{"command-r", "smollm"}, preTokenizer{splitters: splitCoderSeq}},
	{[]string{"falcon"}, preTokenizer{splitters: splitFalconSeq, cleanSpaces: true}},
	{[]string{"deepseek-coder"}, preTokenizer{splitters: splitDeepseekCoderSeq}},
}

var preByName = func() map[string]*preTokenizer {
	m := map[string]*preTokenizer{}
	for i := range preGroups {
		for _, n := range preGroups[i].names {
			m[n] = &preGroups[i].pre
		}
	}
	return m
}()

// SupportedPre lists the tokenizer.ggml.pre values this package implements (for gpt2 vocabularies).
func SupportedPre() []string {
	var names []string
	for n := range preByName {
		if n != "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

func lookupPre(name string) (*preTokenizer, error) {
	if p, ok := preByName[name]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("tandem: tokenizer: pre-tokenizer %q is not supported (supported: %s)", name, strings.Join(SupportedPre(), ", "))
}

// split runs the splitters over text and returns its words. A codepoint past U+10FFFF (from lead
// bytes F5..F7) has no UTF-8 form to give the word: an error, where llama.cpp throws.
func (p *preTokenizer) split(text string) ([]string, error) {
	cpts := decodeCpts(text)
	pieces := []int{len(cpts)}
	for _, s := range p.splitters {
		pieces = s(cpts, pieces)
	}
	words := make([]string, 0, len(pieces))
	start := 0
	var buf []byte
	for _, n := range pieces {
		buf = buf[:0]
		for _, r := range cpts[start : start+n] {
			var err error
			if buf, err = appendCpt(buf, r); err != nil {
				return nil, err
			}
		}
		words = append(words, string(buf))
		start += n
	}
	return words, nil
}

// scanner is the state of one of llama.cpp's hand-written regex scanners over one piece.
type scanner struct {
	cpts     []rune
	ini, end int
	prevEnd  int
	out      []int
}

const outOfRange rune = -1

func (s *scanner) cpt(pos int) rune {
	if pos >= s.ini && pos < s.end {
		return s.cpts[pos]
	}
	return outOfRange
}

func (s *scanner) flags(pos int) cptFlags {
	if pos >= s.ini && pos < s.end {
		return flagsOf(s.cpts[pos])
	}
	return 0
}

// add closes the current word at end and returns its length.
func (s *scanner) add(end int) int {
	n := end - s.prevEnd
	if n > 0 {
		s.out = append(s.out, n)
	}
	s.prevEnd = end
	return n
}

func isNumber(f cptFlags) bool { return f.has(flagNumber) }

// contraction returns the length (2 or 3) of an English contraction ('s 't 're 've 'm 'll 'd)
// at pos, or 0. fold makes it case-insensitive.
func (s *scanner) contraction(pos int, fold bool) int {
	if s.cpt(pos) != '\'' || pos+1 >= s.end {
		return 0
	}
	lower := func(r rune) rune {
		if fold && r >= 0 {
			return unicode.ToLower(r)
		}
		return r
	}
	n := lower(s.cpt(pos + 1))
	switch n {
	case 's', 't', 'm', 'd':
		return 2
	}
	if pos+2 < s.end {
		nn := lower(s.cpt(pos + 2))
		if (n == 'r' && nn == 'e') || (n == 'v' && nn == 'e') || (n == 'l' && nn == 'l') {
			return 3
		}
	}
	return 0
}

// whitespace ends the shared tail of the scanners: \s+(?!\S) and \s+, and (when rn) \s*[\r\n]+.
func (s *scanner) whitespace(pos int, rn bool) int {
	nws, lastRN := 0, 0
	for s.flags(pos + nws).has(flagWhitespace) {
		if c := s.cpt(pos + nws); rn && (c == '\r' || c == '\n') {
			lastRN = pos + nws + 1
		}
		nws++
	}
	switch {
	case lastRN > 0:
		pos = lastRN
	case nws > 1 && s.cpt(pos+nws) != outOfRange:
		pos += nws - 1
	case nws > 0:
		pos += nws
	default:
		pos++
	}
	s.add(pos)
	return pos
}

func forPieces(cpts []rune, pieces []int, scan func(s *scanner)) []int {
	s := &scanner{cpts: cpts, out: make([]int, 0, len(pieces))}
	start := 0
	for _, n := range pieces {
		s.ini, s.end, s.prevEnd = start, start+n, start
		scan(s)
		start += n
	}
	return s.out
}

// splitGPT2 is GPT-2's pattern 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// as llama.cpp's unicode_regex_split_custom_gpt2 scans it.
func splitGPT2(cpts []rune, pieces []int) []int {
	return forPieces(cpts, pieces, func(s *scanner) {
		for pos := s.ini; pos < s.end; {
			c := s.cpt(pos)
			if n := s.contraction(pos, false); n > 0 {
				pos += s.add(pos + n)
				continue
			}
			f := s.flags(pos)
			if c == ' ' {
				f = s.flags(pos + 1)
			}
			var class func(cptFlags) bool
			switch {
			case f.has(flagLetter):
				class = func(f cptFlags) bool { return f.has(flagLetter) }
			case f.has(flagNumber):
				class = isNumber
			case !f.has(flagWhitespace|flagLetter|flagNumber) && f != 0:
				class = func(f cptFlags) bool { return !f.has(flagWhitespace|flagLetter|flagNumber) && f != 0 }
			}
			if class != nil {
				if c == ' ' {
					pos++
				}
				for class(s.flags(pos)) {
					pos++
				}
				s.add(pos)
				continue
			}
			pos = s.whitespace(pos, false)
		}
	})
}

// splitLlama3 is Llama 3's pattern (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
// ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ as unicode_regex_split_custom_llama3 scans it.
func splitLlama3(cpts []rune, pieces []int) []int { return splitLlamaLike(cpts, pieces, 3) }

// splitQwen2 is Llama 3's pattern with single digits (\p{N} for \p{N}{1,3}).
func splitQwen2(cpts []rune, pieces []int) []int { return splitLlamaLike(cpts, pieces, 1) }

func splitLlamaLike(cpts []rune, pieces []int, maxDigits int) []int {
	return forPieces(cpts, pieces, func(s *scanner) {
		for pos := s.ini; pos < s.end; {
			c := s.cpt(pos)
			f := s.flags(pos)
			if n := s.contraction(pos, true); n > 0 {
				pos += s.add(pos + n)
				continue
			}
			// [^\r\n\p{L}\p{N}]?\p{L}+
			if !(c == '\r' || c == '\n' || f.has(flagNumber)) && (f.has(flagLetter) || s.flags(pos+1).has(flagLetter)) {
				pos++
				for s.flags(pos).has(flagLetter) {
					pos++
				}
				s.add(pos)
				continue
			}
			// \p{N}{1,maxDigits}
			if f.has(flagNumber) {
				ini := pos
				for s.flags(pos).has(flagNumber) {
					pos++
					if pos-ini >= maxDigits {
						s.add(pos)
						ini = pos
					}
				}
				s.add(pos)
				continue
			}
			// ?[^\s\p{L}\p{N}]+[\r\n]*
			f2 := f
			if c == ' ' {
				f2 = s.flags(pos + 1)
			}
			if !f2.has(flagWhitespace|flagLetter|flagNumber) && f != 0 {
				if c == ' ' {
					pos++
				}
				for !f2.has(flagWhitespace|flagLetter|flagNumber) && f2 != 0 {
					pos++
					f2 = s.flags(pos)
				}
				for c2 := s.cpt(pos); c2 == '\r' || c2 == '\n'; c2 = s.cpt(pos) {
					pos++
				}
				s.add(pos)
				continue
			}
			pos = s.whitespace(pos, true)
		}
	})
}

// matcher finds the next match of a regex in cpts[from:end]: its start and end, ok false when
// there is none. It stands for a std::regex that llama.cpp runs for the other pre-tokenizers,
// whose split keeps both the matches and the text between them as words.
type matcher func(cpts []rune, from, end int) (start, stop int, ok bool)

func splitByMatches(m matcher) splitter {
	return func(cpts []rune, pieces []int) []int {
		out := make([]int, 0, len(pieces))
		start := 0
		for _, n := range pieces {
			end := start + n
			pos := start
			for pos < end {
				a, b, ok := m(cpts, pos, end)
				if !ok {
					break
				}
				if a > pos {
					out = append(out, a-pos)
				}
				out = append(out, b-a)
				pos = b
			}
			if pos < end {
				out = append(out, end-pos)
			}
			start = end
		}
		return out
	}
}

// runs matches maximal runs of codepoints that pred accepts (a regex [class]+).
func runs(pred func(r rune, f cptFlags) bool) splitter {
	return splitByMatches(func(cpts []rune, from, end int) (int, int, bool) {
		for i := from; i < end; i++ {
			if pred(cpts[i], flagsOf(cpts[i])) {
				j := i + 1
				for j < end && pred(cpts[j], flagsOf(cpts[j])) {
					j++
				}
				return i, j, true
			}
		}
		return 0, 0, false
	})
}

// isolate makes every codepoint that pred (or the list) accepts a word of its own (a regex of one
// class without a quantifier).
func isolate(pred func(cptFlags) bool, also ...rune) splitter {
	return splitByMatches(func(cpts []rune, from, end int) (int, int, bool) {
		for i := from; i < end; i++ {
			if pred(flagsOf(cpts[i])) || containsRune(also, cpts[i]) {
				return i, i + 1, true
			}
		}
		return 0, 0, false
	})
}

func containsRune(rs []rune, r rune) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

// optSpaceRuns matches \s?\p{X}+ for the category flag class.
func optSpaceRuns(class cptFlags) splitter {
	in := func(r rune) bool { f := flagsOf(r); return f.has(class) && !f.has(flagWhitespace) }
	return splitByMatches(func(cpts []rune, from, end int) (int, int, bool) {
		for i := from; i < end; i++ {
			j := i
			if flagsOf(cpts[j]).has(flagWhitespace) && j+1 < end && in(cpts[j+1]) {
				j++
			}
			if in(cpts[j]) {
				k := j + 1
				for k < end && in(cpts[k]) {
					k++
				}
				return i, k, true
			}
		}
		return 0, 0, false
	})
}

// digitTriples matches [0-9][0-9][0-9] (ASCII digits, three at a time from the left).
var digitTriples = splitByMatches(func(cpts []rune, from, end int) (int, int, bool) {
	digit := func(r rune) bool { return r >= '0' && r <= '9' }
	for i := from; i+3 <= end; i++ {
		if digit(cpts[i]) && digit(cpts[i+1]) && digit(cpts[i+2]) {
			return i, i + 3, true
		}
	}
	return 0, 0, false
})
