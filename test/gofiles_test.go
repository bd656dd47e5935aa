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

// walkGoFiles parses, with mode, every .go file of the repository outside hidden and
// testdata directories, generated .pb.go files excluded, and _test.go files too unless
// tests is set; it calls fn with each file's slash-separated path relative to the
// repository root and its syntax, positions in fset. A walk or parse error fails t.
func walkGoFiles(t *testing.T, fset *token.FileSet, mode parser.Mode, tests bool, fn func(rel string, f *ast.File)) {
	t.Helper()
	root := refbin.RepoRoot()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".pb.go") ||
			(!tests && strings.HasSuffix(path, "_test.go")) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, mode)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		fn(filepath.ToSlash(rel), f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
