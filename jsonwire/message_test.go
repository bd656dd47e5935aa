package jsonwire_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/execlab/executor/jsonwire"
)

// TestClassify pins the first-match order of spec/jsonrpc.md §1.2.
func TestClassify(t *testing.T) {
	tests := []struct {
		method, id, result bool
		want               jsonwire.Kind
	}{
		{true, true, false, jsonwire.KindRequest},
		{true, true, true, jsonwire.KindRequest},
		{true, false, true, jsonwire.KindNotification},
		{false, true, true, jsonwire.KindResponse},
		{false, false, true, jsonwire.KindResponse},
		{false, true, false, jsonwire.KindError},
		{false, false, false, jsonwire.KindError},
	}
	for _, tt := range tests {
		if got := jsonwire.Classify(tt.method, tt.id, tt.result); got != tt.want {
			t.Errorf("Classify(method %v, id %v, result %v): got %v, want %v", tt.method, tt.id, tt.result, got, tt.want)
		}
	}
}

// TestScanRootUnbudgeted: the value budget is the only check ScanRootUnbudgeted drops.
func TestScanRootUnbudgeted(t *testing.T) {
	big := []byte(`{"id":1,"result":[` + strings.Repeat("0,", jsonwire.MaxValues) + `0]}`)
	if _, err := jsonwire.ScanRoot(big, nil, nil); err == nil {
		t.Fatal("ScanRoot accepted a message past MaxValues")
	}
	root, err := jsonwire.ScanRootUnbudgeted(big, []string{"result"}, nil)
	if err != nil || !root.Object || len(root.Members) != 1 || root.End != len(big) {
		t.Fatalf("ScanRootUnbudgeted: %+v, %v", root, err)
	}
	for _, in := range []string{`{"a":1,"a":2}`, `{"a":01}`, strings.Repeat("[", jsonwire.MaxDepth) + strings.Repeat("]", jsonwire.MaxDepth)} {
		_, err := jsonwire.ScanRootUnbudgeted([]byte(in), nil, nil)
		_, want := jsonwire.ScanRoot([]byte(in), nil, nil)
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("%.20q: got %v, want %v", in, err, want)
		}
	}
}

func TestObjectMembers(t *testing.T) {
	var keys, vals []string
	ok := jsonwire.ObjectMembers([]byte(` { "a" : 1 , "b\u0063":{"x":[1,"]"]}, "d":"e\"f" ,"g":null} `), func(k, v []byte) bool {
		keys, vals = append(keys, string(k)), append(vals, string(v))
		return k[0] != 'd'
	})
	want := []string{"a", "bc", "d"}
	if !ok || strings.Join(keys, ",") != strings.Join(want, ",") || strings.Join(vals, " ") != `1 {"x":[1,"]"]} "e\"f"` {
		t.Fatalf("got %v, keys %q, values %q", ok, keys, vals)
	}
	// A value ending in an escaped backslash, then one with an escaped quote: each ends at
	// its own closing quote.
	vals = vals[:0]
	jsonwire.ObjectMembers([]byte(`{"a":"x\\","b":"\"y\\\"","c":0}`), func(_, v []byte) bool {
		vals = append(vals, string(v))
		return true
	})
	if got := strings.Join(vals, " "); got != `"x\\" "\"y\\\"" 0` {
		t.Errorf("values %s", got)
	}
	for _, in := range []string{`[1]`, `"s"`, ``, ` `, `null`} {
		if jsonwire.ObjectMembers([]byte(in), func(_, _ []byte) bool { t.Fatal("called"); return true }) {
			t.Errorf("ObjectMembers(%q) reported an object", in)
		}
	}
}

// FuzzObjectMembers: on any text the scanner passes, ObjectMembers yields exactly the
// members encoding/json sees, in order, each value one valid JSON value.
func FuzzObjectMembers(f *testing.F) {
	for _, s := range []string{`{"processId":"p","seq":1,"chunk":"aGk="}`, `{"a\u0062":[1,{"}":"]"}],"c":-0.5e3}`, `{}`, `[{}]`, `{"a":{"a":{}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if jsonwire.Validate(data) != nil {
			return // ObjectMembers takes scanned text only
		}
		var want map[string]json.RawMessage
		isObject := json.Unmarshal(data, &want) == nil && bytes.TrimSpace(data)[0] == '{'
		n := 0
		ok := jsonwire.ObjectMembers(data, func(k, v []byte) bool {
			n++
			if w, found := want[string(k)]; !found || !bytes.Equal(w, v) {
				t.Fatalf("member %q = %q, encoding/json: %q (found %v)", k, v, w, found)
			}
			if err := jsonwire.Validate(v); err != nil {
				t.Fatalf("member %q value %q: %v", k, v, err)
			}
			return true
		})
		if ok != isObject || (ok && n != len(want)) {
			t.Fatalf("got object %v with %d members, want %v with %d", ok, n, isObject, len(want))
		}
	})
}
