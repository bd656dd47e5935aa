package test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execlab/executor/internal/refbin"
)

// takeover lists what an init function may not use: reading the command line or ending
// the process is taking the binary over, which only a re-entry point dispatched by
// internal/reexec from main or TestMain may do (issue 27).
var takeover = map[string]bool{
	"os.Args": true, "os.Exit": true, "syscall.Exit": true, "unix.Exit": true,
	"reexec.Exit": true, "reexec.Main": true, "reexec.TestMain": true, "reexec.Dispatch": true,
}

// TestReexec_NoInitTakesOver: the binary re-enters itself one way, the internal/reexec
// registry. No init function (test files included) reads os.Args or exits, and outside
// tests os.Args is read only by cmd/executor's main and internal/reexec.
func TestReexec_NoInitTakesOver(t *testing.T) {
	root := refbin.RepoRoot()
	fset := token.NewFileSet()
	inits := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".pb.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		argsAllowed := strings.HasSuffix(rel, "_test.go") || rel == "cmd/executor/main.go" || strings.HasPrefix(rel, "internal/reexec/")
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			isInit := fn.Recv == nil && fn.Name.Name == "init"
			if isInit {
				inits++
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				x, ok := sel.X.(*ast.Ident)
				if !ok {
					return true
				}
				name := x.Name + "." + sel.Sel.Name
				switch {
				case isInit && takeover[name]:
					t.Errorf("%s: an init function uses %s: register a re-entry point with reexec.Register instead", fset.Position(sel.Pos()), name)
				case name == "os.Args" && !argsAllowed:
					t.Errorf("%s: reads os.Args: only cmd/executor's main and internal/reexec do", fset.Position(sel.Pos()))
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if inits < 5 {
		t.Fatalf("found %d init functions, want the module's (the walk looks broken)", inits)
	}
}
