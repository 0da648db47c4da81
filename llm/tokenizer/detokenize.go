package tokenizer

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// buildPieces renders every token as llama_token_to_piece(special = true) does.
func (v *Vocab) buildPieces() {
	v.pieces = make([][]byte, len(v.tokens))
	for id := range v.tokens {
		v.pieces[id] = v.renderPiece(int32(id))
	}
}

func (v *Vocab) renderPiece(id int32) []byte {
	t := &v.tokens[id]
	switch {
	case t.attr&(AttrUnknown|AttrControl|AttrUserDefined) != 0:
		return []byte(t.text)
	case t.attr&AttrNormal != 0:
		if v.bpe {
			return decodeByteLevel(t.text)
		}
		return []byte(strings.ReplaceAll(t.text, "\u2581", " "))
	case t.attr&AttrByte != 0:
		return []byte{byteOfToken(t.text)}
	}
	return nil
}

// byteOfToken reads the NN of a byte token "<0xNN>" (hex digits from the fourth byte on, at most
// two; 0 when there are none, as strtol gives).
func byteOfToken(text string) byte {
	var b byte
	for i := 3; i < len(text) && i < 5; i++ {
		c := text[i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return b
		}
		b = b<<4 | d
	}
	return b
}

// decodeByteLevel maps a byte-level BPE token's characters back to bytes. A character outside
// GPT-2's alphabet comes out as llama.cpp writes it: "[UNK_BYTE_0x" + its UTF-8 in hex + the whole
// token text + "]".
func decodeByteLevel(text string) []byte {
	out := make([]byte, 0, len(text))
	for _, r := range decodeCpts(text) {
		if b, ok := runeToByte[r]; ok {
			out = append(out, b)
			continue
		}
		out = append(out, "[UNK_BYTE_0x"...)
		enc, _ := appendCpt(nil, r)
		for _, c := range enc {
			out = fmt.Appendf(out, "%02x", c)
		}
		out = append(out, text...)
		out = append(out, ']')
	}
	return out
}

func (v *Vocab) checkID(id int32) error {
	if id < 0 || int(id) >= len(v.tokens) {
		return fmt.Errorf("tandem: tokenizer: token id %d out of range [0, %d)", id, len(v.tokens))
	}
	return nil
}

// Piece is llama_token_to_piece(id, lstrip = 0, special): the bytes a token stands for. Control
// and unknown tokens give nothing unless special is set (their text then); user-defined tokens
// always give their text. The bytes may be part of a UTF-8 sequence. An id outside the vocabulary
// is an error.
func (v *Vocab) Piece(id int32, special bool) ([]byte, error) {
	if err := v.checkID(id); err != nil {
		return nil, err
	}
	if !special && v.tokens[id].attr&(AttrUnknown|AttrControl) != 0 {
		return []byte{}, nil
	}
	return append([]byte{}, v.pieces[id]...), nil
}

// piece is Piece without the copy and the error.
func (v *Vocab) piece(id int32) []byte {
	if id < 0 || int(id) >= len(v.tokens) || v.tokens[id].attr&(AttrUnknown|AttrControl) != 0 {
		return nil
	}
	return v.pieces[id]
}

// Detokenize turns ids into text as llama_detokenize(remove_special = false, unparse_special =
// false) does: control and unknown tokens give nothing, the first token loses one leading space
// where the vocabulary adds a space prefix (SPM), and byte-level BPE vocabularies that ask for it
// get clean_up_tokenization_spaces (" ." → ".", " 's" → "'s", …). Ids outside the vocabulary
// give nothing (llama.cpp does not check them); the text is the pieces' bytes, which need not be
// valid UTF-8.
func (v *Vocab) Detokenize(ids []int32) string { return v.DetokenizeWith(ids, false, false) }

// DetokenizeWith is llama_detokenize in full: removeSpecial drops a leading BOS and a trailing EOS
// where the vocabulary adds them (AddBOS, AddEOS); unparseSpecial renders control and unknown
// tokens as their text. See Detokenize.
func (v *Vocab) DetokenizeWith(ids []int32, removeSpecial, unparseSpecial bool) string {
	removeSpace := v.addSpacePrefix
	if removeSpecial && v.addBOS && len(ids) > 0 && ids[0] == v.bos {
		removeSpace = false
		ids = ids[1:]
	}
	if removeSpecial && v.addEOS && len(ids) > 0 && ids[len(ids)-1] == v.eos {
		ids = ids[:len(ids)-1]
	}
	var buf []byte
	for i, id := range ids {
		var p []byte
		if unparseSpecial {
			if v.checkID(id) == nil {
				p = v.pieces[id]
			}
		} else {
			p = v.piece(id)
		}
		if i == 0 && removeSpace && len(p) > 0 && p[0] == ' ' {
			p = p[1:]
		}
		buf = append(buf, p...)
	}
	if v.cleanSpaces {
		buf = cleanSpaces(buf)
	}
	return string(buf)
}

// cleanSpaces is llama.cpp's three in-place passes over detokenized text.
func cleanSpaces(t []byte) []byte {
	if len(t) == 0 {
		return t
	}
	// " ?", " !", " .", " ," lose the space
	n := len(t)
	total := 1
	for i := 1; i < n; i++ {
		x := t[i]
		if t[i-1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',') {
			total--
		}
		t[total] = x
		total++
	}
	// " ' " loses both spaces
	n = total
	total = 1
	for i := 1; i < n; i++ {
		x := t[i]
		if x == '\'' && i+1 < n && t[i-1] == ' ' && t[i+1] == ' ' {
			total--
			i++
			t[i] = 0
		}
		t[total] = x
		total++
	}
	// " 's", " 'm", " 're", " 've" lose the space
	n = total
	total = 1
	for i := 1; i < n; i++ {
		x := t[i]
		if t[i-1] == ' ' && x == '\'' && i+1 < n {
			switch x1 := t[i+1]; {
			case x1 == 's' || x1 == 'm':
				total--
			case x1 == 't' || x1 == 'd':
			case i+2 < n:
				if x2 := t[i+2]; (x1 == 'r' || x1 == 'v') && x2 == 'e' {
					total--
				}
			}
		}
		t[total] = x
		total++
	}
	return t[:total]
}

// Decoder turns a stream of generated ids into text, holding back bytes until they complete a
// UTF-8 character (byte tokens <0xE4><0xBD><0xA0> give "你" on the third). It renders each token as
// Piece(id, false) does, with no space stripping or clean-up. A Decoder is not safe for concurrent
// use; make one per stream.
type Decoder struct {
	v       *Vocab
	pending []byte
}

// NewDecoder returns a streaming decoder over v.
func (v *Vocab) NewDecoder() *Decoder { return &Decoder{v: v} }

// Add appends a token and returns the text that became complete: every whole UTF-8 character
// now available, with bytes that cannot be part of one as U+FFFD. An id outside the vocabulary is
// an error and changes nothing.
func (d *Decoder) Add(id int32) (string, error) {
	if err := d.v.checkID(id); err != nil {
		return "", err
	}
	d.pending = append(d.pending, d.v.piece(id)...)
	var sb strings.Builder
	i := 0
	for i < len(d.pending) && utf8.FullRune(d.pending[i:]) {
		r, n := utf8.DecodeRune(d.pending[i:])
		if r == utf8.RuneError && n == 1 {
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.Write(d.pending[i : i+n])
		}
		i += n
	}
	d.pending = append(d.pending[:0], d.pending[i:]...)
	return sb.String(), nil
}

// Flush returns what is held back (an unfinished UTF-8 sequence, as U+FFFD) and resets the
// decoder.
func (d *Decoder) Flush() string {
	s := strings.ToValidUTF8(string(d.pending), "\uFFFD")
	d.pending = d.pending[:0]
	return s
}

// Len is the number of tokens.
func (v *Vocab) Len() int { return len(v.tokens) }

// BOS is the beginning-of-sequence token, -1 when absent.
func (v *Vocab) BOS() int32 { return v.bos }

// EOS is the end-of-sequence token, -1 when absent.
func (v *Vocab) EOS() int32 { return v.eos }

// EOT is the end-of-turn token ("<|eot_id|>", "<|im_end|>", …), -1 when absent.
func (v *Vocab) EOT() int32 { return v.eot }

// EOM is the end-of-message token ("<|eom_id|>"), -1 when absent.
func (v *Vocab) EOM() int32 { return v.eom }

// UNK is the unknown token, -1 when absent.
func (v *Vocab) UNK() int32 { return v.unk }

// IsEOG reports whether id ends generation: EOS, EOT, EOM, the FIM pad/repo/file-separator tokens
// and the tokens llama.cpp recognizes by text ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", …).
func (v *Vocab) IsEOG(id int32) bool { return v.eog[id] }

// EOGs lists the end-of-generation tokens in increasing order.
func (v *Vocab) EOGs() []int32 {
	out := make([]int32, 0, len(v.eog))
	for id := range int32(len(v.tokens)) {
		if v.eog[id] {
			out = append(out, id)
		}
	}
	return out
}

// Attr returns a token's attributes (AttrUndefined for an id outside the vocabulary).
func (v *Vocab) Attr(id int32) Attr {
	if v.checkID(id) != nil {
		return AttrUndefined
	}
	return v.tokens[id].attr
}

// IsControl reports whether id is a control token (BOS, EOS, chat markers, …).
func (v *Vocab) IsControl(id int32) bool { return v.Attr(id)&AttrControl != 0 }

// Text returns a token's text as the vocabulary stores it ("▁the", "Ġthe", "<0x0A>"), "" for an id
// outside the vocabulary.
func (v *Vocab) Text(id int32) string {
	if v.checkID(id) != nil {
		return ""
	}
	return v.tokens[id].text
}

// Score returns a token's score (0 outside the vocabulary or where the file has none).
func (v *Vocab) Score(id int32) float32 {
	if v.checkID(id) != nil {
		return 0
	}
	return v.tokens[id].score
}

// TokenID returns the id of the token whose text is exactly text.
func (v *Vocab) TokenID(text string) (int32, bool) {
	id, ok := v.ids[text]
	return id, ok
}

// AddBOS reports whether Encode with addSpecial puts BOS first.
func (v *Vocab) AddBOS() bool { return v.addBOS }

// AddEOS reports whether Encode with addSpecial puts EOS last.
func (v *Vocab) AddEOS() bool { return v.addEOS }

// AddSpacePrefix reports whether text gets a leading space before SPM tokenization.
func (v *Vocab) AddSpacePrefix() bool { return v.addSpacePrefix }

// Model is tokenizer.ggml.model: "llama" (SPM) or "gpt2" (byte-level BPE).
func (v *Vocab) Model() string { return v.model }

// Pre is tokenizer.ggml.pre ("" when the file has none).
func (v *Vocab) Pre() string { return v.pre }
