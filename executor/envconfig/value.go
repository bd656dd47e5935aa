package envconfig

// The TOML value model: what the reference's toml::Value holds once a file is parsed
// with the crate's preserve_order feature (tables keep document order). Inline tables
// and dotted keys are not remembered; the serializer (encode.go) decides the layout
// from the shape alone, as the reference's does.

import "math"

// Kind is the type of a Value.
type Kind uint8

// Value kinds, in the reference's toml::Value variant order.
const (
	String Kind = iota
	Integer
	Float
	Boolean
	Datetime
	Array
	TableKind
)

// Value is one TOML value. Exactly the member its Kind names is meaningful. Values are
// built by Parse and by projection; they are never shared between two parents.
type Value struct {
	Kind Kind
	Str  string   // String; Datetime in its canonical form (datetime.go)
	Int  int64    // Integer
	Num  float64  // Float
	Bool bool     // Boolean
	Arr  []*Value // Array
	Tab  *Table   // TableKind
}

// Table is an ordered TOML table: keys in document (insertion) order.
type Table struct {
	keys []string
	vals map[string]*Value

	// Parse bookkeeping (TOML 1.0 redefinition rules); not part of the value.
	header  bool // defined by a [header] of its own
	dotted  bool // created by a dotted key
	inline  bool // an inline table: closed for later additions
	fromAOT bool // an element of an array of tables
}

// NewTable returns an empty table.
func NewTable() *Table { return &Table{vals: map[string]*Value{}} }

// Len returns the number of keys.
func (t *Table) Len() int { return len(t.keys) }

// Keys returns the keys in order. The slice must not be modified.
func (t *Table) Keys() []string { return t.keys }

// Get returns the value of key, or nil.
func (t *Table) Get(key string) *Value { return t.vals[key] }

// Set appends key with v, or replaces its value in place when key exists.
func (t *Table) Set(key string, v *Value) {
	if _, ok := t.vals[key]; !ok {
		t.keys = append(t.keys, key)
	}
	t.vals[key] = v
}

// Delete removes key, keeping the order of the others.
func (t *Table) Delete(key string) bool {
	if _, ok := t.vals[key]; !ok {
		return false
	}
	delete(t.vals, key)
	for i, k := range t.keys {
		if k == key {
			t.keys = append(t.keys[:i:i], t.keys[i+1:]...)
			break
		}
	}
	return true
}

// Clone returns a deep copy of v.
func (v *Value) Clone() *Value {
	c := *v
	switch v.Kind {
	case Array:
		c.Arr = make([]*Value, len(v.Arr))
		for i, e := range v.Arr {
			c.Arr[i] = e.Clone()
		}
	case TableKind:
		c.Tab = v.Tab.Clone()
	}
	return &c
}

// Clone returns a deep copy of t (without parse bookkeeping).
func (t *Table) Clone() *Table {
	c := &Table{keys: append([]string(nil), t.keys...), vals: make(map[string]*Value, len(t.vals))}
	for k, v := range t.vals {
		c.vals[k] = v.Clone()
	}
	return c
}

// Equal reports whether a and b hold the same value (NaN equals NaN), key order included.
func Equal(a, b *Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case String, Datetime:
		return a.Str == b.Str
	case Integer:
		return a.Int == b.Int
	case Float:
		return a.Num == b.Num && math.Signbit(a.Num) == math.Signbit(b.Num) || math.IsNaN(a.Num) && math.IsNaN(b.Num)
	case Boolean:
		return a.Bool == b.Bool
	case Array:
		if len(a.Arr) != len(b.Arr) {
			return false
		}
		for i := range a.Arr {
			if !Equal(a.Arr[i], b.Arr[i]) {
				return false
			}
		}
		return true
	case TableKind:
		return TablesEqual(a.Tab, b.Tab)
	}
	return false
}

// TablesEqual reports whether a and b hold the same keys, in the same order, with equal
// values.
func TablesEqual(a, b *Table) bool {
	if len(a.keys) != len(b.keys) {
		return false
	}
	for i, k := range a.keys {
		if b.keys[i] != k || !Equal(a.vals[k], b.vals[k]) {
			return false
		}
	}
	return true
}

func tableValue(t *Table) *Value { return &Value{Kind: TableKind, Tab: t} }

// merge overlays src onto dst as the reference's merge_toml_values does: tables merge
// key by key, recursively; any other value replaces.
func merge(dst, src *Table) {
	for _, k := range src.keys {
		sv := src.vals[k]
		if dv := dst.vals[k]; dv != nil && dv.Kind == TableKind && sv.Kind == TableKind {
			merge(dv.Tab, sv.Tab)
			continue
		}
		dst.Set(k, sv.Clone())
	}
}
