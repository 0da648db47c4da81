package gl

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/tandem-ml/tandem/shaders"
)

// The GL prelude: how one GLSL compute source of package shaders, written for Vulkan, becomes an
// OpenGL 4.3 compute shader. The translation is textual and leaves the GLSL preprocessor to pick
// the branches, so every variant of a source translates the same way:
//
//   - #version 450 becomes #version 430 core; #include "x.glsl" is inlined (GL has no includes);
//     #extension lines and [[unroll]]-style attributes are dropped (GL lacks those extensions).
//   - The push-constant block becomes a std140 uniform block at uniform binding 0 (the blocks hold
//     only 32-bit scalars, where std140 and the push-constant layout agree byte for byte).
//   - Specialization constants become plain constants with the values asked for, and
//     local_size_x_id = 0 sets local_size_x.
//   - GL has no 16-bit storage: a storage array of uint16_t, float16_t or f16vec4 is declared
//     over 32-bit words instead, and every access to it goes through a macro: loads extract the
//     half word, stores replace it with two atomics (so neighbouring halves written by other
//     invocations survive). Names declared 16-bit in any branch get the macros in every branch.
//   - The variant's defines follow the #version line; REDUCE_SUBGROUP is dropped (no subgroup
//     arithmetic in GL 4.3: the shared-memory reduction runs instead).

// glPrelude follows the #version line of every translated shader.
const glPrelude = `#define uint16_t uint
#define float16_t float
#define f16vec2 vec2
#define f16vec4 vec4
#define TANDEM_GL 1
`

// droppedDefines are variant defines GL cannot honour; the shader's fallback path runs instead.
var droppedDefines = map[string]bool{"REDUCE_SUBGROUP": true}

var (
	reInclude   = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]+"([^"]+)"[ \t]*$`)
	reVersion   = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*version[^\n]*$`)
	reExtension = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*extension[^\n]*$`)
	reAttr      = regexp.MustCompile(`\[\[\s*(unroll|dont_unroll|flatten|dont_flatten|loop)\s*\]\]`)
	rePush      = regexp.MustCompile(`layout\s*\(\s*push_constant\s*\)\s*uniform`)
	reSpec      = regexp.MustCompile(`layout\s*\(\s*constant_id\s*=\s*(\d+)\s*\)\s*const\s+(\w+)\s+(\w+)\s*=\s*([^;]+);`)
	reLocalID   = regexp.MustCompile(`,\s*local_size_x_id\s*=\s*0`)
	reLocalX    = regexp.MustCompile(`local_size_x\s*=\s*\d+`)
	reBufDecl   = regexp.MustCompile(`layout\s*\(([^)]*)\)\s*((?:(?:readonly|writeonly|restrict|coherent|volatile)\s+)*)buffer\s+(\w+)\s*\{\s*(\w+)\s+(\w+)\s*\[\s*\]\s*;\s*\}\s*;`)
	reTypeDef   = regexp.MustCompile(`(?m)^([ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+(\w+))[ \t]*$`)
	reComment   = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)
)

// glSource returns the OpenGL compute shader for a shader variant of package shaders, with
// spec[i] as the value of specialization constant i (0: the workgroup size).
func glSource(name string, spec []uint32) (string, error) {
	v, err := shaders.Source(name)
	if err != nil {
		return "", err
	}
	body, err := inlineIncludes(v.Source, 0)
	if err != nil {
		return "", fmt.Errorf("gl: shader %s: %w", name, err)
	}
	body = translate(body, spec)
	var sb strings.Builder
	sb.WriteString("#version 430 core\n")
	for _, d := range v.Defines {
		k, val, _ := strings.Cut(d, "=")
		if droppedDefines[k] {
			continue
		}
		fmt.Fprintf(&sb, "#define %s %s\n", k, val)
	}
	sb.WriteString(glPrelude)
	sb.WriteString(body)
	return sb.String(), nil
}

// inlineIncludes returns file's text with its #include lines replaced by the included text.
func inlineIncludes(file string, depth int) (string, error) {
	if depth > 8 {
		return "", fmt.Errorf("includes nested too deep at %s", file)
	}
	src, err := shaders.ReadSource(file)
	if err != nil {
		return "", err
	}
	var ierr error
	out := reInclude.ReplaceAllStringFunc(src, func(m string) string {
		inc := reInclude.FindStringSubmatch(m)[1]
		text, err := inlineIncludes(inc, depth+1)
		if err != nil && ierr == nil {
			ierr = err
		}
		return text
	})
	return out, ierr
}

// translate applies the rewrites the package comment lists to an include-free source.
func translate(src string, spec []uint32) string {
	src = reComment.ReplaceAllStringFunc(src, func(c string) string {
		// Keep line structure (error messages name lines); drop the text, which may hold
		// brackets that would confuse the access rewriting.
		return strings.Repeat("\n", strings.Count(c, "\n"))
	})
	src = reVersion.ReplaceAllString(src, "")
	src = reExtension.ReplaceAllString(src, "")
	src = reAttr.ReplaceAllString(src, "")
	src = rePush.ReplaceAllString(src, "layout(std140, binding = 0) uniform")
	src = reSpec.ReplaceAllStringFunc(src, func(m string) string {
		g := reSpec.FindStringSubmatch(m)
		id, _ := strconv.Atoi(g[1])
		val := strings.TrimSpace(g[4])
		if id < len(spec) {
			val = strconv.FormatUint(uint64(spec[id]), 10) + "u"
		}
		return fmt.Sprintf("const %s %s = %s;", g[2], g[3], val)
	})
	if reLocalID.MatchString(src) {
		src = reLocalID.ReplaceAllString(src, "")
		if len(spec) > 0 {
			src = reLocalX.ReplaceAllString(src, "local_size_x = "+strconv.FormatUint(uint64(spec[0]), 10))
		}
	}
	return rewrite16(src)
}

// kind16 is how a storage array holds its elements in GL.
type kind16 int

const (
	plain kind16 = iota // 32-bit elements: unchanged
	u16                 // uint16_t: half words of uint
	f16                 // float16_t: half words holding IEEE halves
	f16x4               // f16vec4: uvec2 per vector
)

func kindOf(typ string) kind16 {
	switch typ {
	case "uint16_t", "int16_t":
		return u16
	case "float16_t":
		return f16
	case "f16vec4":
		return f16x4
	}
	return plain
}

// rewrite16 replaces 16-bit storage arrays by 32-bit words and their accesses by macros.
func rewrite16(src string) string {
	// Type macros (#define ELT_T uint16_t) get a companion ELT_T_IS_<kind> define, so a
	// declaration whose element type is a macro picks its layout in the GLSL preprocessor.
	typeMacros := map[string]bool{}
	src = reTypeDef.ReplaceAllStringFunc(src, func(m string) string {
		g := reTypeDef.FindStringSubmatch(m)
		if k := kindOf(g[3]); k != plain {
			typeMacros[g[2]] = true
			return g[1] + fmt.Sprintf("\n#define %s_IS_K%d 1", g[2], k)
		}
		return m
	})
	// Names declared with a 16-bit (or possibly 16-bit) element type.
	names := map[string]bool{}
	for _, g := range reBufDecl.FindAllStringSubmatch(src, -1) {
		if kindOf(g[4]) != plain || typeMacros[g[4]] {
			names[g[5]] = true
		}
	}
	if len(names) == 0 {
		return src
	}
	// Macro aliases of those names (#define KQ_DATA data_a) take the access macros too.
	aliases := map[string]bool{}
	for _, g := range reTypeDef.FindAllStringSubmatch(src, -1) {
		if names[g[3]] {
			aliases[g[2]] = true
		}
	}
	src = reTypeDef.ReplaceAllStringFunc(src, func(m string) string {
		g := reTypeDef.FindStringSubmatch(m)
		if !names[g[3]] {
			return m
		}
		return m + fmt.Sprintf("\n#define %[1]s_LD(i) %[2]s_LD(i)\n#define %[1]s_ST(i, v) %[2]s_ST(i, v)", g[2], g[3])
	})
	access := map[string]bool{}
	for n := range names {
		access[n] = true
	}
	for a := range aliases {
		access[a] = true
	}
	// Rewrite accesses first (declarations contain "name[]" which the access rewriter skips),
	// then the declarations.
	src = rewriteAccesses(src, access)
	return reBufDecl.ReplaceAllStringFunc(src, func(m string) string {
		g := reBufDecl.FindStringSubmatch(m)
		name := g[5]
		if !names[name] {
			return m
		}
		if typeMacros[g[4]] {
			var sb strings.Builder
			for i, k := range []kind16{u16, f16, f16x4} {
				dir := "#elif"
				if i == 0 {
					dir = "\n#if"
				}
				fmt.Fprintf(&sb, "%s defined(%s_IS_K%d)\n%s\n", dir, g[4], k, decl16(g, k))
			}
			return sb.String() + "#else\n" + decl16(g, plain) + "\n#endif"
		}
		return "\n" + decl16(g, kindOf(g[4]))
	})
}

// decl16 is the GL declaration of one storage array of kind k and its access macros;
// g is reBufDecl's match.
func decl16(g []string, k kind16) string {
	layout, quals, block, typ, n := g[1], g[2], g[3], g[4], g[5]
	if k == plain {
		return fmt.Sprintf("layout(%s) %sbuffer %s { %s %s[]; };\n#define %s_LD(i) %s[i]\n#define %s_ST(i, v) %s[i] = (v)",
			layout, quals, block, typ, n, n, n, n, n)
	}
	// Stores use atomics, which writeonly forbids.
	quals = strings.ReplaceAll(quals, "writeonly", "")
	elem := "uint"
	if k == f16x4 {
		elem = "uvec2"
	}
	decl := fmt.Sprintf("layout(%s) %sbuffer %s { %s %s_w[]; };", layout, quals, block, elem, n)
	half := fmt.Sprintf("((%[1]s_w[uint(i) >> 1u] >> ((uint(i) & 1u) << 4u)) & 0xFFFFu)", n)
	store := func(val string) string {
		return fmt.Sprintf("do { uint ti_ = uint(i); uint ts_ = (ti_ & 1u) << 4u; "+
			"atomicAnd(%[1]s_w[ti_ >> 1u], ~(0xFFFFu << ts_)); "+
			"atomicOr(%[1]s_w[ti_ >> 1u], ((%[2]s) & 0xFFFFu) << ts_); } while (false)", n, val)
	}
	switch k {
	case u16:
		return decl + fmt.Sprintf("\n#define %s_LD(i) %s\n#define %s_ST(i, v) %s", n, half, n, store("uint(v)"))
	case f16:
		return decl + fmt.Sprintf("\n#define %s_LD(i) unpackHalf2x16(%s).x\n#define %s_ST(i, v) %s",
			n, half, n, store("packHalf2x16(vec2(float(v), 0.0))"))
	}
	return decl + fmt.Sprintf("\n#define %[1]s_LD(i) vec4(unpackHalf2x16(%[1]s_w[i].x), unpackHalf2x16(%[1]s_w[i].y))"+
		"\n#define %[1]s_ST(i, v) do { vec4 tv_ = vec4(v); %[1]s_w[i] = uvec2(packHalf2x16(tv_.xy), packHalf2x16(tv_.zw)); } while (false)", n)
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// rewriteAccesses turns name[i] into name_LD(i) and name[i] = v (or op=) into name_ST(i, v) for
// the given names; "name[]" (a declaration) stays.
func rewriteAccesses(src string, names map[string]bool) string {
	var out strings.Builder
	i := 0
	for i < len(src) {
		c := src[i]
		if !isIdent(c) || (i > 0 && isIdent(src[i-1])) {
			out.WriteByte(c)
			i++
			continue
		}
		j := i
		for j < len(src) && isIdent(src[j]) {
			j++
		}
		word := src[i:j]
		k := j
		for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
			k++
		}
		if !names[word] || k >= len(src) || src[k] != '[' {
			out.WriteString(word)
			i = j
			continue
		}
		end := matching(src, k, '[', ']')
		if end < 0 || strings.TrimSpace(src[k+1:end]) == "" {
			out.WriteString(word)
			i = j
			continue
		}
		idx := rewriteAccesses(src[k+1:end], names)
		// An assignment follows? (=, but not ==; or a compound op=)
		a := end + 1
		for a < len(src) && (src[a] == ' ' || src[a] == '\t') {
			a++
		}
		op := ""
		if a < len(src) && src[a] == '=' && (a+1 >= len(src) || src[a+1] != '=') {
			op = "="
		} else if a+1 < len(src) && strings.IndexByte("+-*/|&^", src[a]) >= 0 && src[a+1] == '=' {
			op = src[a : a+2]
		}
		if op == "" {
			fmt.Fprintf(&out, "%s_LD(%s)", word, idx)
			i = end + 1
			continue
		}
		rs := a + len(op)
		re := statementEnd(src, rs)
		rhs := strings.TrimSpace(rewriteAccesses(src[rs:re], names))
		if op != "=" {
			rhs = fmt.Sprintf("%s_LD(%s) %s (%s)", word, idx, op[:1], rhs)
		}
		fmt.Fprintf(&out, "%s_ST(%s, %s)", word, idx, rhs)
		i = re
	}
	return out.String()
}

// matching returns the index of the bracket closing the one at src[open], or -1.
func matching(src string, open int, o, c byte) int {
	depth := 0
	for i := open; i < len(src); i++ {
		switch src[i] {
		case o:
			depth++
		case c:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// statementEnd returns the index of the ';' (or end of a macro line) ending the expression at from.
func statementEnd(src string, from int) int {
	depth := 0
	for i := from; i < len(src); i++ {
		switch src[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ';':
			if depth == 0 {
				return i
			}
		case '\n':
			if depth == 0 && i > 0 && src[i-1] != '\\' && lineIsDirective(src, i) {
				return i
			}
		}
	}
	return len(src)
}

// lineIsDirective reports whether the line ending at src[end] is a preprocessor line.
func lineIsDirective(src string, end int) bool {
	start := strings.LastIndexByte(src[:end], '\n') + 1
	return strings.HasPrefix(strings.TrimSpace(src[start:end]), "#")
}
