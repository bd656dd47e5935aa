package test

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/execlab/executor/internal/refbin"
)

var updateArchitecture = flag.Bool("update-architecture", false, "rewrite the -> column (and add missing rows) of docs/architecture.md's package map")

var backticked = regexp.MustCompile("`([^`]+)`")

// covers reports whether a name of the table's first column covers pkg: the package itself,
// or, for a name ending in "/*", the package before it and everything under it.
func covers(name, pkg string) bool {
	if base, ok := strings.CutSuffix(name, "/*"); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return name == pkg
}

// TestArchitectureMap checks docs/architecture.md's package map against `go list`: every
// package of the module has a row, every row names packages that exist, and the `->`
// column is exactly the project packages the row's packages import directly (test files
// excluded), module-relative and sorted, minus the row's own packages. Run
//
//	go test ./test -run TestArchitectureMap -update-architecture
//
// to rewrite the column and append a row (owns: the package comment's first sentence) for
// every package the map lacks.
func TestArchitectureMap(t *testing.T) {
	pkgs := pkgDeps(t)
	path := filepath.Join(refbin.RepoRoot(), "docs", "architecture.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	start := slices.Index(lines, "## Package map")
	if start < 0 {
		t.Fatal("docs/architecture.md has no \"## Package map\" section")
	}
	// The table: the first run of lines starting with "|" after the heading.
	first := start
	for first < len(lines) && !strings.HasPrefix(lines[first], "|") {
		first++
	}
	last := first
	for last < len(lines) && strings.HasPrefix(lines[last], "|") {
		last++
	}
	if last-first < 3 {
		t.Fatal("the package map has no rows")
	}
	const header, rule = "| package | owns | -> (imports; generated) |", "|---|---|---|"
	var rows []string
	var bad []string
	covered := map[string]bool{}
	for i, line := range lines[first+2 : last] {
		cells := splitRow(line)
		if len(cells) != 3 {
			t.Fatalf("package map row %d has %d cells, want 3 (package, owns, ->): %s", i+1, len(cells), line)
		}
		var own []string
		for _, m := range backticked.FindAllStringSubmatch(cells[0], -1) {
			name := m[1]
			found := false
			for p := range pkgs {
				if covers(name, p) {
					found, covered[p] = true, true
					if !strings.Contains(name, "*") {
						own = append(own, p)
					}
				}
			}
			if !found {
				t.Errorf("package map row %q names %s, which is not a package of the module", cells[0], name)
			}
		}
		want := importsCell(pkgs, own)
		if cells[2] != want {
			bad = append(bad, cells[0]+": has "+cells[2]+", go list says "+want)
		}
		rows = append(rows, "| "+cells[0]+" | "+cells[1]+" | "+want+" |")
	}
	var missing []string
	for p := range pkgs {
		if !covered[p] {
			missing = append(missing, p)
		}
	}
	slices.Sort(missing)
	for _, p := range missing {
		doc := pkgs[p].doc
		if doc == "" {
			doc = "(no package comment)"
		}
		rows = append(rows, "| `"+p+"` | "+strings.ReplaceAll(doc, "|", `\|`)+" | "+importsCell(pkgs, []string{p})+" |")
	}
	if lines[first] != header || lines[first+1] != rule {
		bad = append(bad, "header: want "+header)
	}
	if len(bad) == 0 && len(missing) == 0 {
		return
	}
	if *updateArchitecture {
		out := slices.Concat(lines[:first], []string{header, rule}, rows, lines[last:])
		if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s: %d rows corrected, %d added", path, len(bad), len(missing))
		return
	}
	for _, b := range bad {
		t.Errorf("docs/architecture.md package map disagrees with go list: %s", b)
	}
	for _, p := range missing {
		t.Errorf("docs/architecture.md package map has no row for %s", p)
	}
	t.Log("regenerate with: go test ./test -run TestArchitectureMap -update-architecture (then check the owns text of added rows)")
}

// importsCell renders the direct project imports of own, minus own, as the -> cell.
func importsCell(pkgs map[string]pkg, own []string) string {
	var imps []string
	for _, p := range own {
		for _, imp := range pkgs[p].imports {
			imp, ok := strings.CutPrefix(imp, mod)
			if ok && !slices.Contains(own, imp) && !slices.Contains(imps, imp) {
				imps = append(imps, imp)
			}
		}
	}
	if len(imps) == 0 {
		return "—"
	}
	slices.Sort(imps)
	return strings.Join(imps, ", ")
}

// splitRow splits a Markdown table row into its trimmed cells; "\|" is not a separator.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteString(`\|`)
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}
