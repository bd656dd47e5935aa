package protocol

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// methodConstants returns every Method* string constant declared in this package's
// non-test files, by name, with its value.
func methodConstants(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatalf("parsing %s: %v", file, err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "Method") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s: %s is not a string literal", file, name.Name)
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					consts[name.Name] = v
				}
			}
		}
	}
	return consts
}

// TestEveryMethodClassified: each Method* constant is a request (with its properties)
// or a notification, never both, and the tables name nothing else.
func TestEveryMethodClassified(t *testing.T) {
	consts := methodConstants(t)
	if len(consts) < len(requests)+len(notifications) {
		t.Fatalf("found %d Method* constants, tables hold %d: the parse missed some", len(consts), len(requests)+len(notifications))
	}
	values := map[string]bool{}
	for name, v := range consts {
		values[v] = true
		_, req := requests[v]
		switch {
		case req && notifications[v]:
			t.Errorf("%s (%q) is both a request and a notification", name, v)
		case !req && !notifications[v]:
			t.Errorf("%s (%q) is neither in requests nor in notifications (method_props.go)", name, v)
		}
	}
	for v := range requests {
		if !values[v] {
			t.Errorf("requests names %q, which no Method* constant declares", v)
		}
	}
	for v := range notifications {
		if !values[v] {
			t.Errorf("notifications names %q, which no Method* constant declares", v)
		}
	}
}

func TestRequestMethodsSorted(t *testing.T) {
	names := RequestMethods()
	if len(names) != len(requests) {
		t.Fatalf("RequestMethods: %d names, want %d", len(names), len(requests))
	}
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Fatalf("RequestMethods not sorted: %q before %q", names[i-1], names[i])
		}
	}
	if RetrySafe(MethodInitialized) || IsNotification(MethodInitialize) || !IsNotification(MethodInitialized) {
		t.Fatal("initialize / initialized misclassified")
	}
}
