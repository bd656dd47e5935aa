package policy

// Helpers that reproduce serde_json's bare error texts (without " at line L column C";
// spec/jsonrpc.md §1.5) for hand-written decoders. Objects are walked in input order so
// that the first failing field is the one serde would report.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/execlab/executor/jsonwire"
)

type field struct {
	key string
	val json.RawMessage
}

// describe renders a JSON value the way serde's Unexpected does (jsonwire.Unexpected:
// strings in Rust's Debug form, every number just "number", because the reference's
// serde_json is built with arbitrary_precision).
func describe(raw json.RawMessage) string { return jsonwire.Unexpected(raw) }

// describeNumber renders a number the way serde's primitive number visitors do
// (integer `5`, floating point `1.5`), used where a number was expected.
func describeNumber(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if _, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return fmt.Sprintf("integer `%s`", raw)
	}
	if _, err := strconv.ParseUint(string(raw), 10, 64); err == nil {
		return fmt.Sprintf("integer `%s`", raw)
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return "number"
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return fmt.Sprintf("floating point `%s`", s)
}

func invalidType(raw json.RawMessage, expected string) *Error {
	return invalidParams("invalid type: %s, expected %s", describe(raw), expected)
}

func missingField(name string) *Error { return invalidParams("missing field `%s`", name) }

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// unknownVariant renders serde's "unknown variant" text for the given variant list.
func unknownVariant(got string, variants ...string) *Error {
	return invalidParams("unknown variant `%s`, expected %s", got, oneOf(variants))
}

func oneOf(variants []string) string {
	switch len(variants) {
	case 0:
		return "no variants"
	case 1:
		return "`" + variants[0] + "`"
	case 2:
		return "`" + variants[0] + "` or `" + variants[1] + "`"
	}
	quoted := make([]string, len(variants))
	for i, v := range variants {
		quoted[i] = "`" + v + "`"
	}
	return "one of " + strings.Join(quoted, ", ")
}

// objectFields returns the members of a JSON object in input order, or serde's
// invalid-type error naming expected. Duplicate keys are reported when dupCheck is set
// (serde derives reject duplicates in plain structs).
func objectFields(raw json.RawMessage, expected string, dupCheck bool) ([]field, *Error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, invalidType(raw, expected)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return nil, invalidParams("%s", err.Error())
	}
	var out []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, invalidParams("%s", err.Error())
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, invalidParams("%s", err.Error())
		}
		if dupCheck {
			for _, f := range out {
				if f.key == key {
					return nil, invalidParams("duplicate field `%s`", key)
				}
			}
		}
		out = append(out, field{key: key, val: val})
	}
	return out, nil
}

// lookup returns the last member named key (serde's internally tagged enums buffer the
// map, so for the tag the last duplicate is what they see).
func lookup(fields []field, key string) (json.RawMessage, bool) {
	for i := len(fields) - 1; i >= 0; i-- {
		if fields[i].key == key {
			return fields[i].val, true
		}
	}
	return nil, false
}

func decodeString(raw json.RawMessage) (string, *Error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", invalidType(raw, "a string")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", invalidParams("%s", err.Error())
	}
	return s, nil
}

func decodeBool(raw json.RawMessage) (bool, *Error) {
	switch string(bytes.TrimSpace(raw)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, invalidType(raw, "a boolean")
}

func decodeSequence(raw json.RawMessage) ([]json.RawMessage, *Error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, invalidType(raw, "a sequence")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, invalidParams("%s", err.Error())
	}
	return items, nil
}

// decodeVariant decodes a unit-variant enum string of the Rust enum enumName.
func decodeVariant(raw json.RawMessage, enumName string, variants ...string) (string, *Error) {
	return decodeVariantString(raw, "enum "+enumName, variants...)
}

// decodeTag reads the tag member of an internally tagged enum.
func decodeTag(fields []field, tag string, variants ...string) (string, *Error) {
	raw, ok := lookup(fields, tag)
	if !ok {
		return "", missingField(tag)
	}
	return decodeVariantString(raw, "variant identifier", variants...)
}

// decodeVariantString decodes raw as one of variants; expected names what a value of
// another JSON type was expected to be in serde's invalid-type text.
func decodeVariantString(raw json.RawMessage, expected string, variants ...string) (string, *Error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", invalidType(raw, expected)
	}
	s, err := decodeString(raw)
	if err != nil {
		return "", err
	}
	for _, v := range variants {
		if s == v {
			return s, nil
		}
	}
	return "", unknownVariant(s, variants...)
}
