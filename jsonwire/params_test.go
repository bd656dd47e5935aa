package jsonwire_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/execlab/executor/jsonwire"
)

type color string

func (color) Variants() []string { return []string{"red", "green", "blue"} }

type lonely string

func (lonely) Variants() []string { return nil }

type upper string

// UnmarshalJSON accepts only upper-case strings.
func (u *upper) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil || s == "" || s[0] < 'A' || s[0] > 'Z' {
		return errors.New("custom: not upper")
	}
	*u = upper(s)
	return nil
}

type coded string

func (c *coded) UnmarshalJSON([]byte) error { return jsonwire.InvalidRequest("custom -32600") }

type inner struct {
	N uint16 `json:"n"`
}

type kitchen struct {
	Name    string            `json:"name"`
	Opt     *string           `json:"opt"`
	Def     bool              `json:"def,omitempty"`
	Raw     json.RawMessage   `json:"raw"`
	Env     map[string]string `json:"env,omitempty"`
	List    []inner           `json:"list,omitempty"`
	Color   color             `json:"color,omitempty"`
	Lonely  *lonely           `json:"lonely,omitempty"`
	Upper   *upper            `json:"upper,omitempty"`
	Coded   *coded            `json:"coded,omitempty"`
	I8      int8              `json:"i8,omitempty"`
	I32     *int32            `json:"i32,omitempty"`
	U       uint              `json:"u,omitempty"`
	I       int               `json:"i,omitempty"`
	F       float64           `json:"f,omitempty"`
	Blob    jsonwire.Bytes    `json:"blob,omitempty"`
	Any     any               `json:"any,omitempty"`
	Inner   *inner            `json:"inner,omitempty"`
	Skipped string            `json:"-"`
}

func TestUnmarshalParams_Errors(t *testing.T) {
	tests := []struct{ raw, want string }{
		{``, "invalid type: null, expected struct kitchen"},
		{`null`, "invalid type: null, expected struct kitchen"},
		{`{}`, "missing field `name`"},
		{`{"opt":"x"}`, "missing field `name`"},
		{`"s"`, `invalid type: string "s", expected struct kitchen`},
		{`{"name":1}`, "invalid type: number, expected a string"},
		{`{"name":"n","def":null}`, "invalid type: null, expected a boolean"},
		{`{"name":"n","env":{"a":1}}`, "invalid type: number, expected a string"},
		{`{"name":"n","env":[]}`, "invalid type: sequence, expected a map"},
		{`{"name":"n","list":{}}`, "invalid type: map, expected a sequence"},
		{`{"name":"n","list":[{"n":65536}]}`, "invalid number"},
		{`{"name":"n","list":[{}]}`, "missing field `n`"},
		{`{"name":"n","list":[5]}`, "invalid type: number, expected struct inner"},
		{`{"name":"n","color":"pink"}`, "unknown variant `pink`, expected one of `red`, `green`, `blue`"},
		{`{"name":"n","color":{"red":1}}`, "invalid type: number, expected unit"},
		{`{"name":"n","color":{"red":null,"blue":null}}`, "invalid value: map, expected map with a single key"},
		{`{"name":"n","color":true}`, "invalid type: boolean `true`, expected string or map"},
		{`{"name":"n","lonely":"x"}`, "unknown variant `x`, there are no variants"},
		{`{"name":"n","upper":"lower"}`, "custom: not upper"},
		{`{"name":"n","i8":128}`, "invalid number"},
		{`{"name":"n","i8":"x"}`, `invalid type: string "x", expected i8`},
		{`{"name":"n","i32":-2147483649}`, "invalid number"},
		{`{"name":"n","i32":[]}`, "invalid type: sequence, expected i32"},
		{`{"name":"n","u":-1}`, "invalid number"},
		{`{"name":"n","u":false}`, "invalid type: boolean `false`, expected usize"},
		{`{"name":"n","i":1.0}`, "invalid number"},
		{`{"name":"n","i":{}}`, "invalid type: map, expected i64"},
		{`{"name":"n","f":"1"}`, `invalid type: string "1", expected f64`},
		{`{"name":"n","blob":"YR=="}`, "Invalid last symbol 82, offset 1."},
		{`{"name":"n","blob":5}`, "invalid type: number, expected a string"},
		{`{"name":"n","inner":{"n":"\u00e9\u0301\t"}}`, `invalid type: string "é\u{301}\t", expected u16`},
		{`["n"]`, "invalid length 1, expected struct kitchen with 18 elements"},
		{`{"name":"n","a":1,"a":2}`, "duplicate JSON object key `a` at line 1 column 21"},
		{`{"name":"n"`, "EOF while parsing an object at line 1 column 11"},
	}
	for _, tt := range tests {
		var k kitchen
		err := jsonwire.UnmarshalParams(json.RawMessage(tt.raw), &k)
		var e *jsonwire.Error
		if !errors.As(err, &e) || e.Code != jsonwire.CodeInvalidParams || e.Message != tt.want {
			t.Errorf("UnmarshalParams(%s): got %v, want -32602 %q", tt.raw, err, tt.want)
		}
	}
}

func TestUnmarshalParams_Values(t *testing.T) {
	raw := `{"unknown":[1,{"x":1e400}],"name":"n\u00e9","opt":null,"raw":{"k": [1, 2]},"env":{"A":"1","\u0042":"2"},
		"list":[{"n":65535},{"n":-0}],"color":{"green":null},"upper":"OK","i8":-128,"i32":7,"u":18446744073709551615,
		"i":-9223372036854775808,"f":1e400,"blob":"aGk=","any":{"a":[1.5,"x"]},"inner":{"n":1},"Skipped":"no"}`
	var k kitchen
	if err := jsonwire.UnmarshalParams(json.RawMessage(raw), &k); err != nil {
		t.Fatalf("UnmarshalParams: %v", err)
	}
	i32 := int32(7)
	up := upper("OK")
	want := kitchen{
		Name: "né", Raw: json.RawMessage(`{"k": [1, 2]}`), Env: map[string]string{"A": "1", "B": "2"},
		List: []inner{{65535}, {0}}, Color: "green", Upper: &up, I8: -128, I32: &i32, U: 1<<64 - 1,
		I: -1 << 63, Blob: jsonwire.Bytes("hi"), Inner: &inner{1},
		Any: map[string]any{"a": []any{json.Number("1.5"), "x"}},
	}
	got := k
	if got.F <= 1e308 {
		t.Errorf("F: got %v, want +Inf (Rust parse saturates)", got.F)
	}
	got.F = 0
	if !reflect.DeepEqual(got, want) {
		t.Errorf("UnmarshalParams:\n got  %+v\n want %+v", got, want)
	}
}

func TestUnmarshalParams_AbsentAndNull(t *testing.T) {
	var k kitchen
	if err := jsonwire.UnmarshalParams(json.RawMessage(`{"name":"n"}`), &k); err != nil {
		t.Fatal(err)
	}
	if k.Opt != nil || k.Raw != nil || k.Env != nil || k.Def {
		t.Errorf("absent members: got opt=%v raw=%q env=%v def=%v, want zero values", k.Opt, k.Raw, k.Env, k.Def)
	}
	if err := jsonwire.UnmarshalParams(json.RawMessage(`{"name":"n","raw":null}`), &k); err != nil {
		t.Fatal(err)
	}
	if string(k.Raw) != "null" {
		t.Errorf("raw null: got %q, want %q", k.Raw, "null")
	}
	// The target is reset: members absent from the second decode are cleared.
	k.Opt = new(string)
	if err := jsonwire.UnmarshalParams(json.RawMessage(`{"name":"m"}`), &k); err != nil {
		t.Fatal(err)
	}
	if k.Opt != nil || k.Name != "m" {
		t.Errorf("reset: got opt=%v name=%q, want nil, %q", k.Opt, k.Name, "m")
	}
}

func TestUnmarshalParams_CustomErrorCodePassesThrough(t *testing.T) {
	var k kitchen
	err := jsonwire.UnmarshalParams(json.RawMessage(`{"name":"n","coded":"x"}`), &k)
	var e *jsonwire.Error
	if !errors.As(err, &e) || e.Code != jsonwire.CodeInvalidRequest || e.Message != "custom -32600" {
		t.Errorf("got %v, want -32600 %q", err, "custom -32600")
	}
}

func TestUnmarshalParams_Unit(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"", ""}, {"null", ""}, {"{}", ""}, {" { } ", ""},
		{`{"a":1}`, "invalid type: map, expected unit"},
		{"[]", "invalid type: sequence, expected unit"},
		{`"x"`, `invalid type: string "x", expected unit`},
		{"0", "invalid type: number, expected unit"},
		{"true", "invalid type: boolean `true`, expected unit"},
	}
	for _, tt := range tests {
		var u jsonwire.Unit
		err := jsonwire.UnmarshalParams(json.RawMessage(tt.raw), &u)
		got := ""
		if err != nil {
			got = err.(*jsonwire.Error).Message
		}
		if got != tt.want {
			t.Errorf("Unit %q: got %q, want %q", tt.raw, got, tt.want)
		}
	}
}

type seqStruct struct {
	A string  `json:"a"`
	B *string `json:"b"`
	C *string `json:"c,omitempty"`
	D bool    `json:"d,omitempty"`
}

func (seqStruct) RustName() string { return "Seq" }

func TestUnmarshalParams_SequenceForm(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`["a","b"]`, ""},
		{`["a",null,"c",true]`, ""},
		{`["a"]`, "invalid length 1, expected struct Seq with 4 elements"},
		{`[]`, "invalid length 0, expected struct Seq with 4 elements"},
		{`["a","b","c",true,1,2]`, "invalid length 6, expected fewer elements in array"},
		{`["a",1]`, "invalid type: number, expected a string"},
		{`5`, "invalid type: number, expected struct Seq"},
	}
	for _, tt := range tests {
		var s seqStruct
		err := jsonwire.UnmarshalParams(json.RawMessage(tt.raw), &s)
		got := ""
		if err != nil {
			got = err.(*jsonwire.Error).Message
		}
		if got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.raw, got, tt.want)
		}
	}
}

func TestUnmarshalParams_BadTarget(t *testing.T) {
	var k kitchen
	for _, v := range []any{nil, k, (*kitchen)(nil)} {
		err := jsonwire.UnmarshalParams(json.RawMessage(`{}`), v)
		var e *jsonwire.Error
		if !errors.As(err, &e) || e.Code != jsonwire.CodeInternal {
			t.Errorf("UnmarshalParams(%T): got %v, want an internal error", v, err)
		}
	}
}

func TestBytes_JSON(t *testing.T) {
	b := jsonwire.Bytes("hello\x00\xff")
	out, err := json.Marshal(struct {
		B jsonwire.Bytes `json:"b"`
	}{b})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), `{"b":"aGVsbG8A/w=="}`; got != want {
		t.Errorf("Marshal: got %s, want %s", got, want)
	}
	var back jsonwire.Bytes
	if err := json.Unmarshal([]byte(`"aGVsbG8A/w=="`), &back); err != nil || string(back) != string(b) {
		t.Errorf("Unmarshal: got %q, %v; want %q", back, err, b)
	}
	if err := json.Unmarshal([]byte(`"aGVsbG8A/w"`), &back); err == nil || err.Error() != "Invalid padding" {
		t.Errorf("Unmarshal(unpadded): got %v, want Invalid padding", err)
	}
}
