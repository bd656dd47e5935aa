package test

import (
	"go/ast"
	"go/token"
	"strings"
	"testing"
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
	fset := token.NewFileSet()
	inits := 0
	walkGoFiles(t, fset, 0, true, func(rel string, f *ast.File) {
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
	})
	if inits < 5 {
		t.Fatalf("found %d init functions, want the module's (the walk looks broken)", inits)
	}
}
