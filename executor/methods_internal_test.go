package executor

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/protocol"
)

// TestMethodTableMatchesProtocol: the table serves every request method executor/protocol
// declares (method_props.go, which also lists the notifications and checks that every
// Method* constant is one or the other), and nothing else.
func TestMethodTableMatchesProtocol(t *testing.T) {
	want := protocol.RequestMethods()
	for _, name := range want {
		if _, ok := methods[name]; !ok {
			t.Errorf("request method %q is not served (add it to methods in methods.go)", name)
		}
	}
	if len(methods) != len(want) {
		for name := range methods {
			if _, ok := protocol.Props(name); !ok {
				t.Errorf("methods serves %q, which executor/protocol does not list as a request", name)
			}
		}
	}
	for name, m := range methods {
		if m.family == "" || m.prepare == nil {
			t.Errorf("%s: incomplete entry", name)
		}
	}
}

// TestNoInitRegistration: package executor has no init functions; methods.go's literal
// is the only place a method is registered.
func TestNoInitRegistration(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
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
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "init" {
				t.Errorf("%s: func init() (register methods in methods.go's table)", fset.Position(fd.Pos()))
			}
		}
	}
}
