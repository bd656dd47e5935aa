package jsonwire

// Struct decoding with the semantics of serde's derived Deserialize.
//
// Map form {"name": value, …}: members are visited in document order, so the first bad
// member in the text is the one reported; unknown members are skipped; afterwards the
// first absent required field in declaration order is reported as missing.
//
// Sequence form [v0, v1, …]: serde also accepts a struct as an array of its fields in
// declaration order (observed from codex 0.169.0: initialize accepts ["name"]). A short
// array fails at the first absent field that has no default ("invalid length i, expected
// struct X with N elements"); a long one fails after decoding ("invalid length n,
// expected fewer elements in array").
//
// Field kinds, from the Go declaration (see protocol/doc.go for the convention):
//
//	T, no omitempty     required: absent → missing field; in a sequence, required
//	T, omitempty        #[serde(default)]: absent → zero value; null is a type error
//	*T                  Option<T>: absent or null → nil; in a sequence, required
//	*T, omitempty       Option<T> with #[serde(default)]: may also be absent in a sequence
//	json.RawMessage     serde_json::Value: absent → nil; in a sequence, as a pointer

import (
	"reflect"
	"strconv"
	"strings"
)

type fieldKind uint8

const (
	fieldRequired fieldKind = iota
	fieldOption             // absent → zero (nil) in map form
	fieldDefault            // absent → zero in map and sequence form
)

type fieldPlan struct {
	name  string
	index []int
	kind  fieldKind
	dec   decodeFunc
}

type structPlan struct {
	expecting    string // "struct X"
	seqExpecting string // "struct X with N elements"
	fields       []fieldPlan
	byName       map[string]int
}

// rustStructName is the name serde prints for t: RustName() when t provides it, else the
// Go type name.
func rustStructName(t reflect.Type) string {
	switch {
	case t.Implements(rustNamedType):
		return reflect.Zero(t).Interface().(RustNamed).RustName()
	case reflect.PointerTo(t).Implements(rustNamedType):
		return reflect.New(t).Interface().(RustNamed).RustName()
	}
	return t.Name()
}

func (c *compiler) structDecoder(t reflect.Type) decodeFunc {
	p := &structPlan{byName: map[string]int{}}
	c.collectFields(p, t, nil)
	name := rustStructName(t)
	p.expecting = "struct " + name
	p.seqExpecting = "struct " + name + " with " + strconv.Itoa(len(p.fields)) + " elements"
	if len(p.fields) == 1 { // serde says "1 element"
		p.seqExpecting = "struct " + name + " with 1 element"
	}
	return p.decode
}

// collectFields adds t's decodable fields to p, flattening untagged embedded structs
// as encoding/json does.
func (c *compiler) collectFields(p *structPlan, t reflect.Type, index []int) {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		idx := append(append([]int(nil), index...), i)
		if sf.Anonymous && tag == "" && sf.Type.Kind() == reflect.Struct {
			c.collectFields(p, sf.Type, idx)
			continue
		}
		if !sf.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		omitempty := false
		for _, o := range strings.Split(opts, ",") {
			if o == "omitempty" || o == "omitzero" {
				omitempty = true
			}
		}
		kind := fieldRequired
		switch {
		case omitempty:
			kind = fieldDefault
		case sf.Type.Kind() == reflect.Pointer || sf.Type == rawMessageType:
			kind = fieldOption
		}
		if _, dup := p.byName[name]; dup {
			continue
		}
		p.byName[name] = len(p.fields)
		p.fields = append(p.fields, fieldPlan{name: name, index: idx, kind: kind, dec: c.compile(sf.Type)})
	}
}

func (p *structPlan) decode(r *reader, v reflect.Value) error {
	v.SetZero()
	switch r.peek() {
	case '{':
		return p.decodeMap(r, v)
	case '[':
		return p.decodeSeq(r, v)
	default:
		return errInvalidType(r, p.expecting)
	}
}

func (p *structPlan) decodeMap(r *reader, v reflect.Value) error {
	var small uint64
	var big []bool
	if len(p.fields) > 64 {
		big = make([]bool, len(p.fields))
	}
	r.pos++
	for {
		key, escaped, ok := r.objectNext()
		if !ok {
			break
		}
		var i int
		var known bool
		if escaped {
			i, known = p.byName[string(appendUnescaped(nil, key))]
		} else {
			i, known = p.byName[string(key)]
		}
		if !known {
			r.skip()
			continue
		}
		if big != nil {
			big[i] = true
		} else {
			small |= 1 << i
		}
		f := &p.fields[i]
		if err := f.dec(r, v.FieldByIndex(f.index)); err != nil {
			return err
		}
	}
	for i := range p.fields {
		seen := big != nil && big[i] || big == nil && small&(1<<i) != 0
		if !seen && p.fields[i].kind == fieldRequired {
			return errMissingField(p.fields[i].name)
		}
	}
	return nil
}

func (p *structPlan) decodeSeq(r *reader, v reflect.Value) error {
	r.pos++
	open := true
	for i := range p.fields {
		f := &p.fields[i]
		if open && !r.arrayNext() {
			open = false
		}
		if !open {
			if f.kind != fieldDefault {
				return errInvalidLength(i, p.seqExpecting)
			}
			continue
		}
		if err := f.dec(r, v.FieldByIndex(f.index)); err != nil {
			return err
		}
	}
	if open && r.arrayNext() {
		n := len(p.fields)
		for {
			r.skip()
			n++
			if !r.arrayNext() {
				break
			}
		}
		return errInvalidLength(n, "fewer elements in array")
	}
	return nil
}
