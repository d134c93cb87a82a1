package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// parseSnippet parses a Go snippet of the docs: a whole file, or
// declarations, statements (wrapped in a function) or the fields of a
// composite literal, as a reader would paste it.
func parseSnippet(body string) (*ast.File, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "snippet.go", body, parser.SkipObjectResolution)
	if err == nil {
		return f, nil
	}
	if f, err2 := parser.ParseFile(fset, "snippet.go", "package p\n"+body, parser.SkipObjectResolution); err2 == nil {
		return f, nil
	}
	if f, err2 := parser.ParseFile(fset, "snippet.go", "package p\nfunc _() {\n"+body+"\n}", parser.SkipObjectResolution); err2 == nil {
		return f, nil
	}
	// Fields of a composite literal (a Controller's Setup, say).
	if f, err2 := parser.ParseFile(fset, "snippet.go", "package p\nvar _ = T{\n"+body+"\n}", parser.SkipObjectResolution); err2 == nil {
		return f, nil
	}
	return nil, err
}

// exported lists the exported top-level names of the package in dir
// (its non-test files).
func exported(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					names[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = s.Name.IsExported()
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = n.IsExported()
						}
					}
				}
			}
		}
	}
	return names
}

// TestGoSnippetsParseAndNameTheRealAPI: every ```go block of the README
// and docs/ parses as Go, and every name it uses from the user's packages
// (cachelabtest, its cli) exists there, so a rename or a move of the API
// breaks this test rather than a reader's paste.
func TestGoSnippetsParseAndNameTheRealAPI(t *testing.T) {
	api := map[string]map[string]bool{
		"cachelabtest": exported(t, "../cachelabtest"),
		"cli":          exported(t, "../cachelabtest/cli"),
	}
	n := 0
	for _, p := range pages(t) {
		for _, f := range fences(p.text) {
			if f.lang != "go" {
				continue
			}
			n++
			file, err := parseSnippet(f.body)
			if err != nil {
				t.Errorf("%s:%d: the Go snippet does not parse: %v", p.path, f.line, err)
				continue
			}
			ast.Inspect(file, func(x ast.Node) bool {
				sel, ok := x.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				pkg, ok := sel.X.(*ast.Ident)
				if !ok || api[pkg.Name] == nil {
					return true
				}
				if !api[pkg.Name][sel.Sel.Name] {
					t.Errorf("%s:%d: the Go snippet uses %s.%s, which package %s does not export", p.path, f.line, pkg.Name, sel.Sel.Name, pkg.Name)
				}
				return true
			})
		}
	}
	if n == 0 {
		t.Fatal("no Go snippet found: the test reads nothing")
	}
}
