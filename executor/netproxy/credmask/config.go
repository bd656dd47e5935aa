package credmask

// Decoding of proxy.credentialProviders (spec/network-proxy.md §9.4) with the texts of
// the reference's serde derive: the map is HashMap<String, CredentialProviderConfig>
// with #[serde(default)] (absent → empty, null → a type error), and every provider is
// #[serde(deny_unknown_fields)] with snake_case members, all optional. Because the
// reference buffers proxy before decoding it, numbers are named the way serde's
// Content names them: "integer `1`", "floating point `1.5`".
//
// Probed on codex 0.171.0:
//
//	"s"                       invalid type: string "s", expected a map
//	[1]                       invalid type: sequence, expected a map
//	null                      invalid type: null, expected a map
//	{"x":true}                invalid type: boolean `true`, expected struct CredentialProviderConfig
//	{"x":null}                invalid type: null, expected struct CredentialProviderConfig
//	{"x":{"urlPrefixes":…}}   unknown field `urlPrefixes`, expected one of `env`, …, `prefix`
//	{"x":{"env":"X"}}         invalid type: string "X", expected a sequence
//	{"x":{"env":[1]}}         invalid type: integer `1`, expected a string
//	{"x":{"auth":["bogus"]}}  unknown variant `bogus`, expected one of `bearer`, `token`, `basic`, `header`
//	{"x":{"auth":[{"bearer":null}]}}, {"x":{"prefix":null}}, {"x":[["A"]]}  accepted
//	{"x":{"env":1,"bogus":1}} the first bad member in document order wins
//	{"x":{"auth":[1]}}        invalid type: integer `1`, expected string or map
//	{"x":{"auth":[{}]}}       invalid value: map, expected map with a single key
//	{"x":{"auth":[{"bearer":1}]}} invalid type: integer `1`, expected unit
//	{"x":[[],[],[],null,[],null,null,1]} invalid length 8, expected 7 elements in sequence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/execlab/executor/jsonwire"
)

// AuthScheme is how a custom provider's credential travels in a request.
type AuthScheme string

// The auth schemes of §9.4.
const (
	AuthBearer AuthScheme = "bearer" // Authorization: Bearer <value>
	AuthToken  AuthScheme = "token"  // Authorization: token <value>
	AuthBasic  AuthScheme = "basic"  // Authorization: Basic base64(user:password), either field
	AuthHeader AuthScheme = "header" // <header>: <prefix><value>
)

var authVariants = []string{"bearer", "token", "basic", "header"}

var providerFields = []string{"env", "patterns", "url_prefixes", "url_prefix_from_env", "auth", "header", "prefix"}

// ProviderConfig is one decoded credentialProviders entry. Pointers are nil when the
// member is absent or null. It holds no secret.
type ProviderConfig struct {
	Env              []string
	Patterns         []string
	URLPrefixes      []string
	URLPrefixFromEnv *string
	Auth             []AuthScheme
	Header           *string
	Prefix           *string
}

// ProviderEntry is a provider with its id, in document order.
type ProviderEntry struct {
	ID     string
	Config ProviderConfig
}

// DecodeProviders decodes the raw credentialProviders member. nil or empty raw means
// absent (no providers). Errors carry the reference's bare serde text, for the caller
// to send as -32602. Semantic problems are not errors here: see compileProviders.
func DecodeProviders(raw json.RawMessage) ([]ProviderEntry, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	if err := jsonwire.Validate(raw); err != nil {
		return nil, err
	}
	if raw[0] != '{' {
		return nil, invalidType(raw, "a map")
	}
	var out []ProviderEntry
	err := eachMember(raw, func(key string, val json.RawMessage) error {
		cfg, err := decodeProvider(val)
		if err != nil {
			return err
		}
		out = append(out, ProviderEntry{ID: key, Config: cfg})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func decodeProvider(raw json.RawMessage) (ProviderConfig, error) {
	var cfg ProviderConfig
	switch raw[0] {
	case '{':
		seen := map[string]bool{}
		err := eachMember(raw, func(key string, val json.RawMessage) error {
			if !isProviderField(key) {
				return fmt.Errorf("unknown field `%s`, expected one of %s", key, quoteList(providerFields))
			}
			if seen[key] {
				return fmt.Errorf("duplicate field `%s`", key)
			}
			seen[key] = true
			return decodeProviderField(&cfg, key, val)
		})
		return cfg, err
	case '[':
		// serde accepts a struct as the sequence of its fields in declaration order.
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			return cfg, fmt.Errorf("decoding provider sequence: %w", err)
		}
		for i, val := range elems {
			if i >= len(providerFields) {
				return cfg, fmt.Errorf("invalid length %d, expected %d elements in sequence", len(elems), len(providerFields))
			}
			if err := decodeProviderField(&cfg, providerFields[i], val); err != nil {
				return cfg, err
			}
		}
		return cfg, nil
	}
	return cfg, invalidType(raw, "struct CredentialProviderConfig")
}

func isProviderField(k string) bool {
	for _, f := range providerFields {
		if f == k {
			return true
		}
	}
	return false
}

func decodeProviderField(cfg *ProviderConfig, key string, val json.RawMessage) error {
	switch key {
	case "env":
		return decodeStrings(val, &cfg.Env)
	case "patterns":
		return decodeStrings(val, &cfg.Patterns)
	case "url_prefixes":
		return decodeStrings(val, &cfg.URLPrefixes)
	case "url_prefix_from_env":
		return decodeOptString(val, &cfg.URLPrefixFromEnv)
	case "header":
		return decodeOptString(val, &cfg.Header)
	case "prefix":
		return decodeOptString(val, &cfg.Prefix)
	case "auth":
		var elems []json.RawMessage
		if err := decodeSeq(val, &elems); err != nil {
			return err
		}
		cfg.Auth = make([]AuthScheme, 0, len(elems))
		for _, e := range elems {
			a, err := decodeAuth(e)
			if err != nil {
				return err
			}
			cfg.Auth = append(cfg.Auth, a)
		}
	}
	return nil
}

func decodeAuth(raw json.RawMessage) (AuthScheme, error) {
	name := ""
	switch raw[0] {
	case '"':
		s, err := jsonwire.String(raw)
		if err != nil {
			return "", err
		}
		name = s
	case '{':
		// An externally tagged unit variant may be written {"bearer": null}.
		n := 0
		var valErr error
		err := eachMember(raw, func(key string, val json.RawMessage) error {
			n++
			name = key
			if string(bytes.TrimSpace(val)) != "null" {
				valErr = invalidType(val, "unit")
			}
			return nil
		})
		if err != nil {
			return "", err
		}
		if n != 1 {
			return "", fmt.Errorf("invalid value: map, expected map with a single key")
		}
		if !isAuth(name) {
			return "", unknownVariant(name)
		}
		if valErr != nil {
			return "", valErr
		}
		return AuthScheme(name), nil
	default:
		return "", invalidType(raw, "string or map")
	}
	if !isAuth(name) {
		return "", unknownVariant(name)
	}
	return AuthScheme(name), nil
}

func isAuth(s string) bool {
	for _, v := range authVariants {
		if v == s {
			return true
		}
	}
	return false
}

func unknownVariant(name string) error {
	return fmt.Errorf("unknown variant `%s`, expected one of %s", name, quoteList(authVariants))
}

func decodeSeq(raw json.RawMessage, out *[]json.RawMessage) error {
	if raw[0] != '[' {
		return invalidType(raw, "a sequence")
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decoding sequence: %w", err)
	}
	return nil
}

func decodeStrings(raw json.RawMessage, out *[]string) error {
	var elems []json.RawMessage
	if err := decodeSeq(raw, &elems); err != nil {
		return err
	}
	res := make([]string, 0, len(elems))
	for _, e := range elems {
		if e[0] != '"' {
			return invalidType(e, "a string")
		}
		s, err := jsonwire.String(e)
		if err != nil {
			return err
		}
		res = append(res, s)
	}
	*out = res
	return nil
}

func decodeOptString(raw json.RawMessage, out **string) error {
	if string(raw) == "null" {
		*out = nil
		return nil
	}
	if raw[0] != '"' {
		return invalidType(raw, "a string")
	}
	s, err := jsonwire.String(raw)
	if err != nil {
		return err
	}
	*out = &s
	return nil
}

// eachMember calls fn for each member of the JSON object raw (already validated), in
// document order, stopping at the first error.
func eachMember(raw json.RawMessage, fn func(key string, val json.RawMessage) error) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // '{'
		return fmt.Errorf("reading object: %w", err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("reading key: %w", err)
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return fmt.Errorf("reading member: %w", err)
		}
		if err := fn(key, bytes.TrimSpace(val)); err != nil {
			return err
		}
	}
	return nil
}

// invalidType is serde's "invalid type: <unexpected>, expected <exp>", naming numbers
// as serde's buffered Content does.
func invalidType(raw json.RawMessage, exp string) error {
	return fmt.Errorf("invalid type: %s, expected %s", describeContent(raw), exp)
}

func describeContent(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
		s := string(raw)
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return "integer `" + strconv.FormatInt(i, 10) + "`"
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return "integer `" + strconv.FormatUint(u, 10) + "`"
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			t := strconv.FormatFloat(f, 'f', -1, 64)
			if !strings.ContainsAny(t, ".eEnN") {
				t += ".0" // serde's WithDecimalPoint
			}
			return "floating point `" + t + "`"
		}
	}
	return jsonwire.Unexpected(raw)
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	return strings.Join(q, ", ")
}

// Providers is credentialProviders as a field type: declared in the proxy config
// struct as `CredentialProviders credmask.Providers `json:"credentialProviders,omitempty"“,
// jsonwire decodes it in document order with the texts of DecodeProviders (absent →
// nil; null → "invalid type: null, expected a map").
type Providers []ProviderEntry

// UnmarshalJSON implements json.Unmarshaler with DecodeProviders.
func (p *Providers) UnmarshalJSON(raw []byte) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return invalidType(json.RawMessage("null"), "a map")
	}
	entries, err := DecodeProviders(raw)
	if err != nil {
		return err
	}
	*p = entries
	return nil
}
