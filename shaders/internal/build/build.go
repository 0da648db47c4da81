// Package build compiles tandem's GLSL compute shaders to SPIR-V with glslc and
// checks that the committed SPIR-V is up to date.
//
// Every shader variant (a .comp source plus a set of defines) is listed in
// Variants. Generate writes <name>.spv for each variant and a manifest
// (manifest.txt) that records, per variant, the SHA-256 of its inputs (compiler
// flags, defines, the .comp source and every .glsl include) and of its output.
//
// Two staleness checks use the manifest:
//   - CheckInputs (no compiler needed): the sources hash to what the manifest
//     recorded, every .spv matches its recorded hash, and no file is missing or
//     extra. It catches a .comp/.glsl edit without a regeneration and a hand-edited
//     or stale .spv.
//   - CheckCompile (needs glslc): regenerates everything into a temporary directory
//     and compares byte for byte with the committed files. The glslc version is
//     recorded in the manifest; a different version is reported as a mismatch,
//     since its output legitimately differs.
package build

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// TargetEnv is the Vulkan environment the shaders are compiled for (SPIR-V 1.5).
const TargetEnv = "vulkan1.2"

// ManifestName is the manifest file written next to the .spv files.
const ManifestName = "manifest.txt"

// Variant is one compiled shader: a source file compiled with a set of defines.
type Variant struct {
	Name    string   // output name, without .spv; the key of shaders.Get
	Source  string   // .comp file, relative to the shader source directory
	Defines []string // "NAME" or "NAME=VALUE", passed to glslc as -D
}

// Variants lists every shader variant that is generated and embedded, sorted by name. Each shader
// family registers its variants from its own file with Register.
var Variants []Variant

// Register adds shader variants; call it from init in the file that describes a shader family.
func Register(vs ...Variant) {
	Variants = append(Variants, vs...)
	sort.Slice(Variants, func(i, j int) bool { return Variants[i].Name < Variants[j].Name })
}

// Flags returns the glslc command-line arguments (without output path) for v.
func Flags(v Variant) []string {
	args := []string{"-fshader-stage=compute", "--target-env=" + TargetEnv, "-O", "-Werror"}
	for _, d := range v.Defines {
		args = append(args, "-D"+d)
	}
	return append(args, v.Source)
}

// InputHash hashes everything that determines v's output apart from the
// compiler itself: the flags, v's source and every .glsl file in srcDir.
func InputHash(srcDir string, v Variant) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "flags %q\n", Flags(v))
	files := []string{v.Source}
	incs, err := filepath.Glob(filepath.Join(srcDir, "*.glsl"))
	if err != nil {
		return "", err
	}
	for _, inc := range incs {
		files = append(files, filepath.Base(inc))
	}
	sort.Strings(files[1:])
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(srcDir, f))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "file %s %d\n", f, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func sha(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// GlslcVersion returns the first line of `glslc --version`.
func GlslcVersion(glslc string) (string, error) {
	out, err := exec.Command(glslc, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("running %s --version: %w", glslc, err)
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(line), nil
}

// Compile compiles v with glslc and returns the SPIR-V.
func Compile(glslc, srcDir string, v Variant) ([]byte, error) {
	tmp, err := os.CreateTemp("", "tandem-"+v.Name+"-*.spv")
	if err != nil {
		return nil, err
	}
	tmpName := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpName)
	args := append(Flags(v), "-o", tmpName)
	cmd := exec.Command(glslc, args...)
	cmd.Dir = srcDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("glslc %s (%s): %w\n%s", v.Name, strings.Join(args, " "), err, stderr.String())
	}
	return os.ReadFile(tmpName)
}

// Validate runs spirv-val on spv if spirv-val is on PATH; it returns nil when not.
func Validate(name string, spv []byte) error {
	val, err := exec.LookPath("spirv-val")
	if err != nil {
		return nil
	}
	cmd := exec.Command(val, "--target-env", TargetEnv, "-")
	cmd.Stdin = bytes.NewReader(spv)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("spirv-val %s: %w\n%s", name, err, out)
	}
	return nil
}

// Manifest is the parsed manifest file.
type Manifest struct {
	Glslc   string           // glslc version line
	Entries map[string]Entry // by variant name
	order   []string
}

// Entry is one manifest line.
type Entry struct {
	Input, Output string // hex SHA-256 of the inputs and of the .spv
}

// Generate compiles every variant into outDir (created if needed), validates it
// with spirv-val when available, removes stale .spv files and writes the manifest.
func Generate(glslc, srcDir, outDir string) error {
	version, err := GlslcVersion(glslc)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	var man strings.Builder
	fmt.Fprintf(&man, "# Generated by `go generate ./shaders`; do not edit.\n")
	fmt.Fprintf(&man, "# glslc: %s\n", version)
	fmt.Fprintf(&man, "# name input-sha256 output-sha256\n")
	keep := map[string]bool{ManifestName: true}
	for _, v := range Variants {
		spv, err := Compile(glslc, srcDir, v)
		if err != nil {
			return err
		}
		if err := Validate(v.Name, spv); err != nil {
			return err
		}
		in, err := InputHash(srcDir, v)
		if err != nil {
			return err
		}
		file := v.Name + ".spv"
		keep[file] = true
		if err := writeIfChanged(filepath.Join(outDir, file), spv); err != nil {
			return err
		}
		fmt.Fprintf(&man, "%s %s %s\n", v.Name, in, sha(spv))
	}
	old, err := filepath.Glob(filepath.Join(outDir, "*.spv"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if !keep[filepath.Base(f)] {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	return writeIfChanged(filepath.Join(outDir, ManifestName), []byte(man.String()))
}

func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	return os.WriteFile(path, data, 0o644)
}

// ParseManifest parses a manifest written by Generate.
func ParseManifest(data []byte) (*Manifest, error) {
	m := &Manifest{Entries: map[string]Entry{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "# glslc: "); ok {
			m.Glslc = v
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil, fmt.Errorf("manifest line %d: want 3 fields, got %q", n, line)
		}
		if _, dup := m.Entries[f[0]]; dup {
			return nil, fmt.Errorf("manifest line %d: duplicate %s", n, f[0])
		}
		m.Entries[f[0]] = Entry{Input: f[1], Output: f[2]}
		m.order = append(m.order, f[0])
	}
	return m, sc.Err()
}

// CheckInputs verifies, without a compiler, that the SPIR-V in spvDir was
// generated from the current sources in srcDir. It returns one line per problem.
func CheckInputs(srcDir, spvDir string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(spvDir, ManifestName))
	if err != nil {
		return nil, err
	}
	m, err := ParseManifest(data)
	if err != nil {
		return nil, err
	}
	var problems []string
	want := map[string]bool{}
	for _, v := range Variants {
		want[v.Name] = true
		e, ok := m.Entries[v.Name]
		if !ok {
			problems = append(problems, v.Name+": not in the manifest (new variant; run go generate ./shaders)")
			continue
		}
		in, err := InputHash(srcDir, v)
		if err != nil {
			return nil, err
		}
		if in != e.Input {
			problems = append(problems, v.Name+": sources changed since the SPIR-V was generated (run go generate ./shaders)")
		}
		spv, err := os.ReadFile(filepath.Join(spvDir, v.Name+".spv"))
		if err != nil {
			problems = append(problems, v.Name+": "+err.Error())
			continue
		}
		if sha(spv) != e.Output {
			problems = append(problems, v.Name+".spv: differs from the manifest's hash (edited or not regenerated)")
		}
	}
	for _, name := range m.order {
		if !want[name] {
			problems = append(problems, name+": in the manifest but no longer a variant (run go generate ./shaders)")
		}
	}
	files, err := filepath.Glob(filepath.Join(spvDir, "*.spv"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".spv")
		if !want[name] {
			problems = append(problems, filepath.Base(f)+": not a variant (run go generate ./shaders)")
		}
	}
	return problems, nil
}

// CheckCompile regenerates every variant with glslc into a temporary directory
// and compares the result byte for byte with spvDir. It returns one line per
// problem; a glslc version different from the manifest's is itself a problem.
func CheckCompile(glslc, srcDir, spvDir string) ([]string, error) {
	tmp, err := os.MkdirTemp("", "tandem-spirv-check-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := Generate(glslc, srcDir, tmp); err != nil {
		return nil, err
	}
	var problems []string
	oldMan, err := os.ReadFile(filepath.Join(spvDir, ManifestName))
	if err != nil {
		return nil, err
	}
	m, err := ParseManifest(oldMan)
	if err != nil {
		return nil, err
	}
	version, err := GlslcVersion(glslc)
	if err != nil {
		return nil, err
	}
	if m.Glslc != version {
		problems = append(problems, fmt.Sprintf("manifest was generated by glslc %q, this is %q: outputs may differ for that reason alone", m.Glslc, version))
	}
	names, err := filepath.Glob(filepath.Join(tmp, "*"))
	if err != nil {
		return nil, err
	}
	for _, f := range names {
		base := filepath.Base(f)
		fresh, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		committed, err := os.ReadFile(filepath.Join(spvDir, base))
		if errors.Is(err, os.ErrNotExist) {
			problems = append(problems, base+": missing (run go generate ./shaders)")
			continue
		} else if err != nil {
			return nil, err
		}
		if !bytes.Equal(fresh, committed) {
			problems = append(problems, base+": stale (regenerated output differs; run go generate ./shaders)")
		}
	}
	committed, err := filepath.Glob(filepath.Join(spvDir, "*.spv"))
	if err != nil {
		return nil, err
	}
	for _, f := range committed {
		if _, err := os.Stat(filepath.Join(tmp, filepath.Base(f))); errors.Is(err, os.ErrNotExist) {
			problems = append(problems, filepath.Base(f)+": not produced by any variant (run go generate ./shaders)")
		}
	}
	return problems, nil
}
