package tokenizer

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestFlagsAgainstLlamaCpp compares the categories this package takes from Go's unicode tables with
// llama.cpp's generated table (src/unicode-data.cpp) when TANDEM_LLAMA_SRC names a llama.cpp
// checkout. The tables may come from different Unicode versions: codepoints unassigned on one side
// are counted and logged; a codepoint assigned on both sides must get the same class and the same
// White_Space property.
func TestFlagsAgainstLlamaCpp(t *testing.T) {
	src := os.Getenv("TANDEM_LLAMA_SRC")
	if src == "" {
		t.Skip("TANDEM_LLAMA_SRC not set (a llama.cpp checkout)")
	}
	data, err := os.ReadFile(filepath.Join(src, "src", "unicode-data.cpp"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	section := func(name string) string {
		i := strings.Index(text, name)
		if i < 0 {
			t.Fatalf("%s not found", name)
		}
		j := strings.Index(text[i:], "};")
		return text[i : i+j]
	}
	pair := regexp.MustCompile(`\{0x([0-9A-Fa-f]+), 0x([0-9A-Fa-f]+)\}`)
	ranges := pair.FindAllStringSubmatch(section("unicode_ranges_flags"), -1)
	table := make([]cptFlags, maxCodepoint)
	for i := 0; i+1 < len(ranges); i++ {
		lo, _ := strconv.ParseUint(ranges[i][1], 16, 32)
		hi, _ := strconv.ParseUint(ranges[i+1][1], 16, 32)
		fl, _ := strconv.ParseUint(ranges[i][2], 16, 16)
		for c := lo; c < hi && c < maxCodepoint; c++ {
			table[c] = cptFlags(fl) & 0xFF
		}
	}
	for _, m := range regexp.MustCompile(`0x([0-9A-Fa-f]+),`).FindAllStringSubmatch(section("unicode_set_whitespace"), -1) {
		c, _ := strconv.ParseUint(m[1], 16, 32)
		table[c] |= flagWhitespace
	}
	onlyOne, differ := 0, 0
	for c := range rune(maxCodepoint) {
		want, got := table[c], flagsOf(c)
		if want == got {
			continue
		}
		if want&0xFF == flagUndefined || got&0xFF == flagUndefined {
			onlyOne++
			continue
		}
		differ++
		if differ <= 20 {
			t.Errorf("U+%04X: llama.cpp flags %#x, Go %#x", c, want, got)
		}
	}
	t.Logf("%d codepoints assigned in only one of the two Unicode versions; %d differ", onlyOne, differ)
}
