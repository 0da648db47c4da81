package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"strings"
	"testing"
)

// TestDocsSayWhatNilMeans: every exported function or method of the library packages that takes a
// pointer parameter says in its doc comment what nil means; in core and alloc, whose types are the
// vocabulary every caller handles, methods on pointer receivers too.
func TestDocsSayWhatNilMeans(t *testing.T) {
	dirs := []string{"../core", "../alloc", "../scheduler", "../backends/cpu", "../backends/vulkan", "../backends/rpc", "../core/gguf", "../opt"}
	receivers := map[string]bool{"../core": true, "../alloc": true}
	checked := 0
	for _, dir := range dirs {
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pkgs {
			for _, f := range p.Files {
				for _, d := range f.Decls {
					fd, ok := d.(*ast.FuncDecl)
					if !ok || !fd.Name.IsExported() || !hasPointerParam(fd, receivers[dir]) {
						continue
					}
					checked++
					if !strings.Contains(strings.ToLower(fd.Doc.Text()), "nil") {
						t.Errorf("%s: %s takes a pointer but its doc does not say what nil means", fset.Position(fd.Pos()), fd.Name.Name)
					}
				}
			}
		}
	}
	if checked < 30 {
		t.Fatalf("only %d functions checked: the sweep lost its reach", checked)
	}
}

// hasPointerParam reports whether fd is exported API taking a pointer parameter (or, with
// receivers, a pointer receiver).
func hasPointerParam(fd *ast.FuncDecl, receivers bool) bool {
	if fd.Recv != nil {
		rt := fd.Recv.List[0].Type
		star, isPtr := rt.(*ast.StarExpr)
		if isPtr {
			rt = star.X
		}
		if id, ok := rt.(*ast.Ident); !ok || !id.IsExported() {
			return false
		}
		if isPtr && receivers {
			return true
		}
	}
	for _, fl := range fd.Type.Params.List {
		typ := fl.Type
		if el, ok := typ.(*ast.Ellipsis); ok {
			typ = el.Elt
		}
		if _, ok := typ.(*ast.StarExpr); ok {
			return true
		}
	}
	return false
}
