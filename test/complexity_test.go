package test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// maxComplexity is the bound on a function's cyclomatic complexity in non-test,
// non-generated code (issue 19). A state machine whose branch count is its grammar's
// says so in its doc comment ("state machine") and is exempt.
const maxComplexity = 25

// complexity counts as gocyclo does: 1, plus one per if, for, range, non-default case
// clause, select case, && and ||.
func complexity(fn *ast.FuncDecl) int {
	n := 1
	ast.Inspect(fn, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			n++
		case *ast.CaseClause:
			if x.List != nil {
				n++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				n++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				n++
			}
		}
		return true
	})
	return n
}

func TestComplexity_Bounded(t *testing.T) {
	checked := 0
	walkGoFiles(t, token.NewFileSet(), parser.ParseComments, false, func(rel string, f *ast.File) {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			checked++
			c := complexity(fn)
			if c <= maxComplexity || strings.Contains(fn.Doc.Text(), "state machine") {
				continue
			}
			t.Errorf("%s: %s has cyclomatic complexity %d, over %d: split it, or say in its doc comment why it is a state machine",
				rel, fn.Name.Name, c, maxComplexity)
		}
	})
	if checked < 500 {
		t.Fatalf("checked %d functions; the walk missed the tree", checked)
	}
}
