package credmask_test

import (
	"encoding/json"
	"testing"

	"github.com/execlab/executor/executor/netproxy/credmask"
	"github.com/execlab/executor/jsonwire"
)

// TestDecodeProviders_ReferenceTexts pins the texts observed on codex 0.171.0
// (process/start with networkProxy.proxy.credentialProviders; see config.go).
func TestDecodeProviders_ReferenceTexts(t *testing.T) {
	const unknownField = "expected one of `env`, `patterns`, `url_prefixes`, `url_prefix_from_env`, `auth`, `header`, `prefix`"
	tests := []struct {
		name, raw, want string
	}{
		{"string", `"s"`, `invalid type: string "s", expected a map`},
		{"sequence", `[1]`, `invalid type: sequence, expected a map`},
		{"null", `null`, `invalid type: null, expected a map`},
		{"provider bool", `{"x":true}`, "invalid type: boolean `true`, expected struct CredentialProviderConfig"},
		{"provider null", `{"x":null}`, `invalid type: null, expected struct CredentialProviderConfig`},
		{"camelCase", `{"x":{"urlPrefixes":["a"]}}`, "unknown field `urlPrefixes`, " + unknownField},
		{"unknown", `{"x":{"env":["A"],"bogus":1}}`, "unknown field `bogus`, " + unknownField},
		{"unknown first", `{"x":{"bogus":1,"env":1}}`, "unknown field `bogus`, " + unknownField},
		{"type error first", `{"x":{"env":1,"bogus":1}}`, "invalid type: integer `1`, expected a sequence"},
		{"env string", `{"x":{"env":"X"}}`, `invalid type: string "X", expected a sequence`},
		{"env element", `{"x":{"env":[1]}}`, "invalid type: integer `1`, expected a string"},
		{"header number", `{"x":{"header":1}}`, "invalid type: integer `1`, expected a string"},
		{"auth variant", `{"x":{"auth":["bogus"]}}`, "unknown variant `bogus`, expected one of `bearer`, `token`, `basic`, `header`"},
		{"auth string", `{"x":{"auth":"bearer"}}`, `invalid type: string "bearer", expected a sequence`},
		{"auth number", `{"x":{"auth":[1]}}`, "invalid type: integer `1`, expected string or map"},
		{"auth empty map", `{"x":{"auth":[{}]}}`, "invalid value: map, expected map with a single key"},
		{"auth two keys", `{"x":{"auth":[{"bearer":null,"token":null}]}}`, "invalid value: map, expected map with a single key"},
		{"auth value", `{"x":{"auth":[{"bearer":1}]}}`, "invalid type: integer `1`, expected unit"},
		{"sequence too long", `{"x":[[],[],[],null,[],null,null,1]}`, "invalid length 8, expected 7 elements in sequence"},
		{"float", `{"x":{"env":1.5}}`, "invalid type: floating point `1.5`, expected a sequence"},
		{"float integral", `{"x":{"env":[2.0]}}`, "invalid type: floating point `2.0`, expected a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := credmask.DecodeProviders(json.RawMessage(tt.raw))
			if err == nil || err.Error() != tt.want {
				t.Fatalf("DecodeProviders(%s) = %v, want %q", tt.raw, err, tt.want)
			}
		})
	}
}

func TestDecodeProviders_Accepted(t *testing.T) {
	for _, raw := range []string{
		``, `{}`,
		`{"x":{"auth":[{"bearer":null}]}}`,
		`{"x":{"prefix":null}}`,
		`{"x":{"url_prefix_from_env":null}}`,
		`{"x":[["A"]]}`,
		`{"c":{"env":["T"],"patterns":["tok_[a-z]{8}"],"url_prefixes":["http://127.0.0.1:9/"],"url_prefix_from_env":"U","auth":["bearer","token","basic","header"],"header":"X-Key","prefix":"Key "}}`,
	} {
		if _, err := credmask.DecodeProviders(json.RawMessage(raw)); err != nil {
			t.Errorf("DecodeProviders(%s) = %v, want nil", raw, err)
		}
	}
	got, err := credmask.DecodeProviders(json.RawMessage(`{"b":{"env":["B"]},"a":[["A"],["p"]]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "b" || got[1].ID != "a" || got[1].Config.Env[0] != "A" || got[1].Config.Patterns[0] != "p" {
		t.Fatalf("got %+v, want b then a (document order), a from the sequence form", got)
	}
}

func FuzzDecodeProviders(f *testing.F) {
	for _, s := range []string{`{}`, `{"x":{"env":["A"],"auth":[{"header":null}],"header":"X"}}`, `{"x":[["A"],[],[],null]}`, `{"x":{"auth":[{}]}}`, `[`, `{"x":{"env":[1e400]}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		entries, err := credmask.DecodeProviders([]byte(raw))
		if err != nil {
			return
		}
		// Whatever decodes must compile or be skipped, never panic.
		_ = credmask.CompileForTest(entries)
	})
}

// TestProviders_AsJSONWireField decodes Providers as a struct member through jsonwire,
// as executor/netproxy's config would: document order decides which error wins.
func TestProviders_AsJSONWireField(t *testing.T) {
	type proxy struct {
		Mode                string             `json:"mode,omitempty"`
		CredentialProviders credmask.Providers `json:"credentialProviders,omitempty"`
	}
	var p proxy
	if err := jsonwire.Decode([]byte(`{"credentialProviders":{"c":{"env":["A"]}},"mode":"full"}`), &p); err != nil || len(p.CredentialProviders) != 1 || p.CredentialProviders[0].ID != "c" {
		t.Fatalf("decode: %v, %+v", err, p)
	}
	p = proxy{}
	if err := jsonwire.Decode([]byte(`{"mode":"full"}`), &p); err != nil || p.CredentialProviders != nil {
		t.Fatalf("absent: %v, %+v", err, p)
	}
	for raw, want := range map[string]string{
		`{"credentialProviders":null}`:                       "invalid type: null, expected a map",
		`{"credentialProviders":{"x":{"bogus":1}},"mode":1}`: "unknown field `bogus`, expected one of `env`, `patterns`, `url_prefixes`, `url_prefix_from_env`, `auth`, `header`, `prefix`",
		`{"mode":1,"credentialProviders":{"x":{"bogus":1}}}`: "invalid type: number, expected a string", // jsonwire's text for the member before it
	} {
		err := jsonwire.Decode([]byte(raw), &p)
		if err == nil || err.Error() != want {
			t.Errorf("Decode(%s) = %v, want %q", raw, err, want)
		}
	}
}
