package tokenizer

import (
	"container/heap"
	"fmt"
	"strings"
)

// fragment is a piece of the input: raw text (text[off:off+n]) or a special token found in it.
type fragment struct {
	token  int32 // -1 for raw text
	off, n int
}

// Tokenize turns text into token ids with special-token text parsed (as llama-cli does for
// prompts): Encode(text, addSpecial, true).
func (v *Vocab) Tokenize(text string, addSpecial bool) ([]int32, error) {
	return v.Encode(text, addSpecial, true)
}

// Encode is llama_tokenize in full. addSpecial adds BOS and EOS where the vocabulary asks for them
// (AddBOS, AddEOS). parseSpecial finds control and unknown tokens written in the text
// ("<|im_start|>"); user-defined tokens are always found. The error cases are a byte that an SPM
// vocabulary has no token for (llama.cpp throws there too) and a BOS/EOS that is wanted but absent.
func (v *Vocab) Encode(text string, addSpecial, parseSpecial bool) ([]int32, error) {
	var frags []fragment
	if text != "" {
		frags = v.partition(text, parseSpecial)
	}
	var out []int32
	if addSpecial && v.addBOS {
		if v.bos == nullToken {
			return nil, fmt.Errorf("tandem: tokenizer: the vocabulary asks for a BOS token but has none")
		}
		out = append(out, v.bos)
	}
	if v.bpe {
		for _, f := range frags {
			if f.token >= 0 {
				out = append(out, f.token)
				continue
			}
			var err error
			if out, err = v.bpeTokenize(text[f.off:f.off+f.n], out); err != nil {
				return nil, err
			}
		}
	} else {
		prevSpecial := true
		var buf strings.Builder
		for _, f := range frags {
			if f.token >= 0 {
				out = append(out, f.token)
				prevSpecial = true
				continue
			}
			buf.Reset()
			if v.addSpacePrefix && prevSpecial {
				buf.WriteByte(' ')
			}
			buf.WriteString(text[f.off : f.off+f.n])
			var err error
			if out, err = v.spmTokenize(strings.ReplaceAll(buf.String(), " ", "\u2581"), out); err != nil {
				return nil, err
			}
			prevSpecial = false
		}
	}
	if addSpecial && v.addEOS {
		if v.eos == nullToken {
			return nil, fmt.Errorf("tandem: tokenizer: the vocabulary asks for an EOS token but has none")
		}
		out = append(out, v.eos)
	}
	return out, nil
}

func isSpaceC(b byte) bool { return b == ' ' || (b >= '\t' && b <= '\r') }

// partition splits text at the special tokens it contains, longest token first, each token in
// turn splitting the raw pieces the longer ones left; a token with lstrip (rstrip) swallows the
// ASCII whitespace before (after) it.
func (v *Vocab) partition(text string, parseSpecial bool) []fragment {
	frags := []fragment{{token: -1, off: 0, n: len(text)}}
	var next []fragment
	for _, id := range v.special {
		t := &v.tokens[id]
		if !parseSpecial && t.attr&(AttrControl|AttrUnknown) != 0 {
			continue
		}
		st := t.text
		next = next[:0]
		changed := false
		for _, f := range frags {
			if f.token >= 0 {
				next = append(next, f)
				continue
			}
			off, n := f.off, f.n
			for n > 0 {
				i := strings.Index(text[off:off+n], st)
				if i < 0 {
					break
				}
				changed = true
				match := off + i
				if i > 0 {
					ln := i
					if t.attr&AttrLStrip != 0 {
						for ln > 0 && isSpaceC(text[off+ln-1]) {
							ln--
						}
					}
					if ln > 0 {
						next = append(next, fragment{token: -1, off: off, n: ln})
					}
				}
				next = append(next, fragment{token: id})
				roff, rn := match+len(st), off+n-(match+len(st))
				if rn > 0 && t.attr&AttrRStrip != 0 {
					for rn > 0 && isSpaceC(text[roff]) {
						roff++
						rn--
					}
				}
				off, n = roff, rn
			}
			if n > 0 {
				next = append(next, fragment{token: -1, off: off, n: n})
			}
		}
		if changed {
			frags, next = next, frags
		}
	}
	return frags
}

// SPM

type spmSymbol struct {
	prev, next int
	off, n     int // bytes of the session text
}

type spmBigram struct {
	left, right int
	score       float32
	size        int
}

type spmQueue []spmBigram

func (q spmQueue) Len() int { return len(q) }
func (q spmQueue) Less(i, j int) bool {
	if q[i].score != q[j].score {
		return q[i].score > q[j].score
	}
	return q[i].left < q[j].left
}
func (q spmQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *spmQueue) Push(x any)   { *q = append(*q, x.(spmBigram)) }
func (q *spmQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

type spmSession struct {
	v     *Vocab
	text  string
	syms  []spmSymbol
	queue spmQueue
	rev   map[string][2]int
}

// spmTokenize is llama.cpp's llm_tokenizer_spm_session: start from UTF-8 characters, merge the
// adjacent pair whose joined text is the highest-scoring token (leftmost on ties) until no pair
// is a token, then emit tokens, falling back to byte tokens for pieces that are not.
func (v *Vocab) spmTokenize(text string, out []int32) ([]int32, error) {
	s := &spmSession{v: v, text: text, rev: map[string][2]int{}}
	for off := 0; off < len(text); {
		n := min(utf8Len(text[off]), len(text)-off)
		idx := len(s.syms)
		next := idx + 1
		if off+n == len(text) {
			next = -1
		}
		s.syms = append(s.syms, spmSymbol{prev: idx - 1, next: next, off: off, n: n})
		off += n
	}
	for i := 1; i < len(s.syms); i++ {
		s.tryBigram(i-1, i)
	}
	for s.queue.Len() > 0 {
		b := heap.Pop(&s.queue).(spmBigram)
		l, r := &s.syms[b.left], &s.syms[b.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			s.syms[r.next].prev = b.left
		}
		s.tryBigram(l.prev, b.left)
		s.tryBigram(b.left, l.next)
	}
	if len(s.syms) == 0 {
		return out, nil
	}
	var err error
	for i := 0; i != -1 && err == nil; i = s.syms[i].next {
		out, err = s.resegment(i, out, 0)
	}
	return out, err
}

func (s *spmSession) tryBigram(left, right int) {
	if left == -1 || right == -1 {
		return
	}
	text := s.text[s.syms[left].off : s.syms[left].off+s.syms[left].n+s.syms[right].n]
	id, ok := s.v.ids[text]
	if !ok {
		return
	}
	heap.Push(&s.queue, spmBigram{left: left, right: right, score: s.v.tokens[id].score, size: len(text)})
	s.rev[text] = [2]int{left, right}
}

func (s *spmSession) resegment(i int, out []int32, depth int) ([]int32, error) {
	sym := s.syms[i]
	text := s.text[sym.off : sym.off+sym.n]
	if id, ok := s.v.ids[text]; ok {
		return append(out, id), nil
	}
	if p, ok := s.rev[text]; ok && depth < len(s.syms) && p[0] != i {
		var err error
		if out, err = s.resegment(p[0], out, depth+1); err != nil {
			return out, err
		}
		return s.resegment(p[1], out, depth+1)
	}
	for j := 0; j < len(text); j++ {
		id, err := s.v.byteToken(text[j])
		if err != nil {
			return out, err
		}
		out = append(out, id)
	}
	return out, nil
}

const hexDigits = "0123456789ABCDEF"

// byteToken is the token for a raw byte: <0xNN> in SPM vocabularies, else the byte itself as a
// one-byte token.
func (v *Vocab) byteToken(b byte) (int32, error) {
	if !v.bpe {
		if id, ok := v.ids[string([]byte{'<', '0', 'x', hexDigits[b>>4], hexDigits[b&15], '>'})]; ok {
			return id, nil
		}
		if id, ok := v.ids[string([]byte{b})]; ok {
			return id, nil
		}
		return 0, fmt.Errorf("tandem: tokenizer: no token for byte %#02x (no <0x%02X> byte fallback token)", b, b)
	}
	if id, ok := v.ids[string(byteEncode(nil, []byte{b}))]; ok {
		return id, nil
	}
	return 0, fmt.Errorf("tandem: tokenizer: no token for byte %#02x", b)
}

// BPE

type bpeSymbol struct {
	prev, next int
	off, n     int // bytes of the word
}

type bpeBigram struct {
	left, right int
	text        string
	rank        int
}

type bpeQueue []bpeBigram

func (q bpeQueue) Len() int { return len(q) }
func (q bpeQueue) Less(i, j int) bool {
	if q[i].rank != q[j].rank {
		return q[i].rank < q[j].rank
	}
	return q[i].left < q[j].left
}
func (q bpeQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *bpeQueue) Push(x any)   { *q = append(*q, x.(bpeBigram)) }
func (q *bpeQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// bpeTokenize is llama.cpp's llm_tokenizer_bpe_session: pre-tokenize into words, map each word's
// bytes to GPT-2's alphabet, and merge the adjacent pair with the lowest merge rank (leftmost on
// ties) until none is left. A final piece that is not a token is emitted byte by byte where those
// bytes are one-byte tokens, and dropped otherwise, as llama.cpp does.
func (v *Vocab) bpeTokenize(text string, out []int32) ([]int32, error) {
	words, err := v.preTok.split(text)
	if err != nil {
		return nil, err
	}
	var enc []byte
	var syms []bpeSymbol
	var queue bpeQueue
	for _, w := range words {
		enc = byteEncode(enc[:0], []byte(w))
		word := string(enc)
		syms = syms[:0]
		queue = queue[:0]
		if v.ignoreMerges {
			if id, ok := v.ids[word]; ok {
				out = append(out, id)
				continue
			}
		}
		for off := 0; off < len(word); {
			n := min(utf8Len(word[off]), len(word)-off)
			idx := len(syms)
			next := idx + 1
			if off+n == len(word) {
				next = -1
			}
			syms = append(syms, bpeSymbol{prev: idx - 1, next: next, off: off, n: n})
			off += n
		}
		add := func(left, right int) {
			if left == -1 || right == -1 {
				return
			}
			l, r := syms[left], syms[right]
			rank, ok := v.ranks[mergePair{word[l.off : l.off+l.n], word[r.off : r.off+r.n]}]
			if !ok {
				return
			}
			heap.Push(&queue, bpeBigram{left: left, right: right, text: word[l.off : r.off+r.n], rank: rank})
		}
		for i := 1; i < len(syms); i++ {
			add(i-1, i)
		}
		for queue.Len() > 0 {
			b := heap.Pop(&queue).(bpeBigram)
			l, r := &syms[b.left], &syms[b.right]
			if l.n == 0 || r.n == 0 || l.off+l.n != r.off || word[l.off:r.off+r.n] != b.text {
				continue
			}
			l.n += r.n
			r.n = 0
			l.next = r.next
			if r.next >= 0 {
				syms[r.next].prev = b.left
			}
			add(l.prev, b.left)
			add(b.left, l.next)
		}
		for _, s := range syms {
			if s.n == 0 {
				continue
			}
			piece := word[s.off : s.off+s.n]
			if id, ok := v.ids[piece]; ok {
				out = append(out, id)
				continue
			}
			for j := 0; j < len(piece); j++ {
				if id, ok := v.ids[piece[j:j+1]]; ok {
					out = append(out, id)
				}
			}
		}
	}
	return out, nil
}
