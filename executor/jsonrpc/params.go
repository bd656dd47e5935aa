package jsonrpc

import "encoding/json"

// UnmarshalParams decodes raw params (nil = absent = null) into v with serde-compatible
// semantics, returning a *Error with CodeInvalidParams and the bare decoder text.
//
// TEMPORARY implementation over encoding/json.
func UnmarshalParams(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		raw = json.RawMessage("null")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return InvalidParams("%s", err.Error())
	}
	return nil
}
