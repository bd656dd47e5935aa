package envconfig

// Projection (spec/capabilities-0.171.0.md §6.2): the requested paths form a prefix
// tree; a layer keeps only the selected keys, in its own key order. A selected key
// whose value is not a table is kept whole even when the selector goes deeper (so a
// scalar can still override lower layers); a selector that is a prefix of another
// selects the whole subtree; a layer left empty is dropped.

// selector is one node of the prefix tree.
type selector struct {
	terminal bool
	children map[string]*selector
}

func newSelector(paths [][]string) *selector {
	root := &selector{}
	for _, p := range paths {
		root.insert(p)
	}
	return root
}

func (s *selector) insert(path []string) {
	if s.terminal {
		return
	}
	if len(path) == 0 {
		s.terminal = true
		s.children = nil
		return
	}
	if s.children == nil {
		s.children = map[string]*selector{}
	}
	c := s.children[path[0]]
	if c == nil {
		c = &selector{}
		s.children[path[0]] = c
	}
	c.insert(path[1:])
}

// Project returns the part of t that paths select, or nil when nothing is selected
// (and no path is empty). t is not modified; the result shares nothing with it.
func Project(t *Table, paths [][]string) *Table {
	sel := newSelector(paths)
	out := projectValue(tableValue(t), sel)
	if !sel.terminal && out.Tab.Len() == 0 {
		return nil
	}
	return out.Tab
}

func projectValue(v *Value, sel *selector) *Value {
	if sel.terminal || v.Kind != TableKind {
		return v.Clone()
	}
	out := NewTable()
	for _, k := range v.Tab.keys {
		if c := sel.children[k]; c != nil {
			out.Set(k, projectValue(v.Tab.vals[k], c))
		}
	}
	return tableValue(out)
}
