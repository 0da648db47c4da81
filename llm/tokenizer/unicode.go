package tokenizer

import (
	"fmt"
	"unicode"
)

// maxCodepoint bounds the codepoints the category table knows; llama.cpp's decoder can produce
// values up to 0x1FFFFF from 4-byte sequences with lead bytes F5..F7, which have no category.
const maxCodepoint = 0x110000

// utf8Len is the length of a UTF-8 sequence as its lead byte announces it. Continuation bytes and
// the invalid leads F8..FF count as one byte, as llama.cpp's unicode_len_utf8 does; the SPM and
// BPE merge loops cut their symbols with it, without validating the bytes that follow.
func utf8Len(b byte) int {
	switch b >> 4 {
	case 0xC, 0xD:
		return 2
	case 0xE:
		return 3
	case 0xF:
		return 4
	}
	return 1
}

// decodeCpts turns text into codepoints the way llama.cpp's unicode_cpts_from_utf8 does: the
// sequence length comes from the lead byte and only the continuation bits are checked, so
// overlong forms and surrogates decode to their (non-canonical) values, and every byte that
// cannot start a sequence becomes U+FFFD on its own.
func decodeCpts(s string) []rune {
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		r, n := decodeOne(s, i)
		out = append(out, r)
		i += n
	}
	return out
}

func cont(s string, i int) bool { return i < len(s) && s[i]&0xC0 == 0x80 }

func decodeOne(s string, i int) (rune, int) {
	b := s[i]
	switch {
	case b&0x80 == 0:
		return rune(b), 1
	case b&0x40 == 0:
		return unicode.ReplacementChar, 1
	case b&0x20 == 0:
		if cont(s, i+1) {
			return rune(b&0x1F)<<6 | rune(s[i+1]&0x3F), 2
		}
	case b&0x10 == 0:
		if cont(s, i+1) && cont(s, i+2) {
			return rune(b&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), 3
		}
	case b&0x08 == 0:
		if cont(s, i+1) && cont(s, i+2) && cont(s, i+3) {
			return rune(b&0x07)<<18 | rune(s[i+1]&0x3F)<<12 | rune(s[i+2]&0x3F)<<6 | rune(s[i+3]&0x3F), 4
		}
	}
	return unicode.ReplacementChar, 1
}

// appendCpt appends the UTF-8 form of a codepoint without Go's substitution of surrogates, as
// llama.cpp's unicode_cpt_to_utf8 encodes them. Values past U+10FFFF have no encoding: an error,
// where llama.cpp throws.
func appendCpt(dst []byte, r rune) ([]byte, error) {
	switch {
	case r < 0:
		return dst, fmt.Errorf("tandem: tokenizer: invalid codepoint %#x", r)
	case r <= 0x7F:
		return append(dst, byte(r)), nil
	case r <= 0x7FF:
		return append(dst, 0xC0|byte(r>>6), 0x80|byte(r&0x3F)), nil
	case r <= 0xFFFF:
		return append(dst, 0xE0|byte(r>>12), 0x80|byte(r>>6&0x3F), 0x80|byte(r&0x3F)), nil
	case r <= 0x10FFFF:
		return append(dst, 0xF0|byte(r>>18), 0x80|byte(r>>12&0x3F), 0x80|byte(r>>6&0x3F), 0x80|byte(r&0x3F)), nil
	}
	return dst, fmt.Errorf("tandem: tokenizer: codepoint %#x is past U+10FFFF and has no UTF-8 form", r)
}

// cptFlags are the Unicode properties the pre-tokenizers test, as llama.cpp's unicode_cpt_flags
// hold them: one general category class per codepoint plus the White_Space property.
type cptFlags uint16

const (
	flagUndefined  cptFlags = 1 << iota // Cn (unassigned)
	flagNumber                          // \p{N}
	flagLetter                          // \p{L}
	flagSeparator                       // \p{Z}
	flagMark                            // \p{M}
	flagPunct                           // \p{P}
	flagSymbol                          // \p{S}
	flagControl                         // \p{C} without Cn
	flagWhitespace                      // \s (White_Space)
)

// flagsOf classifies a codepoint with Go's Unicode tables. Every codepoint below 0x110000 gets at
// least one flag (Cn gives flagUndefined), so a zero value means "outside the text", as in the
// scanners of llama.cpp's unicode.cpp. Go's White_Space set is the one llama.cpp lists (U+0009..D,
// U+0020, U+0085, U+00A0, U+1680, U+2000..200A, U+2028, U+2029, U+202F, U+205F, U+3000).
func flagsOf(r rune) cptFlags {
	if r < 0 || r >= maxCodepoint {
		return flagUndefined
	}
	if r < 0x80 {
		return asciiFlags[r]
	}
	return computeFlags(r)
}

var asciiFlags = func() (t [0x80]cptFlags) {
	for r := range t {
		t[r] = computeFlags(rune(r))
	}
	return t
}()

func computeFlags(r rune) cptFlags {
	var f cptFlags
	switch {
	case unicode.IsLetter(r):
		f = flagLetter
	case unicode.IsNumber(r):
		f = flagNumber
	case unicode.IsMark(r):
		f = flagMark
	case unicode.IsPunct(r):
		f = flagPunct
	case unicode.IsSymbol(r):
		f = flagSymbol
	case unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp):
		f = flagSeparator
	case unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs):
		f = flagControl
	default:
		f = flagUndefined
	}
	if unicode.Is(unicode.White_Space, r) {
		f |= flagWhitespace
	}
	return f
}

func (f cptFlags) has(m cptFlags) bool { return f&m != 0 }

// byteToRune is GPT-2's byte-to-unicode table: printable Latin-1 bytes stand for themselves, the
// other 68 bytes map in order to U+0100 and up. runeToByte is its inverse.
var byteToRune, runeToByte = func() (fwd [256]rune, inv map[rune]byte) {
	inv = make(map[rune]byte, 256)
	printable := func(b int) bool {
		return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)
	}
	n := 0
	for b := range 256 {
		if printable(b) {
			fwd[b] = rune(b)
		} else {
			fwd[b] = rune(256 + n)
			n++
		}
		inv[fwd[b]] = byte(b)
	}
	return fwd, inv
}()

// byteEncode maps every byte of s through GPT-2's byte-to-unicode table.
func byteEncode(dst []byte, s []byte) []byte {
	for _, b := range s {
		r := byteToRune[b]
		if r < 0x80 {
			dst = append(dst, byte(r))
		} else {
			dst = append(dst, 0xC0|byte(r>>6), 0x80|byte(r&0x3F))
		}
	}
	return dst
}
