package alloc_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"strings"
	"testing"
)

// TestDocsSayWhatNilMeans: every exported function and method of the package that takes a pointer
// (a pointer parameter or a pointer receiver) says in its doc comment what nil means.
func TestDocsSayWhatNilMeans(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || !fd.Name.IsExported() || !takesPointer(fd) {
					continue
				}
				checked++
				if !strings.Contains(strings.ToLower(fd.Doc.Text()), "nil") {
					t.Errorf("%s: %s takes a pointer but its doc does not say what nil means", fset.Position(fd.Pos()), fd.Name.Name)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no functions checked")
	}
}

// takesPointer reports whether fd is exported API with a pointer parameter or pointer receiver.
func takesPointer(fd *ast.FuncDecl) bool {
	if fd.Recv != nil {
		rt := fd.Recv.List[0].Type
		star, isPtr := rt.(*ast.StarExpr)
		if isPtr {
			rt = star.X
		}
		if id, ok := rt.(*ast.Ident); !ok || !id.IsExported() {
			return false
		}
		if isPtr {
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
