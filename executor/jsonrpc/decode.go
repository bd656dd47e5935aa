package jsonrpc

import (
	"encoding/json"
	"errors"
)

// Parse decodes one inbound message. On failure the error text is the serde-style detail
// that goes after "failed to parse ... message from ...: " (spec/jsonrpc.md §1.4).
//
// TEMPORARY implementation: to be replaced by the token-level decoder (value budget,
// duplicate keys, serde-style details).
func Parse(data []byte) (*Message, error) {
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *Error          `json:"error"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, err
	}
	m := &Message{}
	switch {
	case env.Method != nil && env.ID != nil:
		m.Kind = KindRequest
	case env.Method != nil:
		m.Kind = KindNotification
	case env.Result != nil:
		m.Kind = KindResponse
	case env.Error != nil && env.ID != nil:
		m.Kind = KindError
	default:
		return nil, errors.New("data did not match any variant of untagged enum JSONRPCMessage")
	}
	if env.Method != nil {
		m.Method = *env.Method
	}
	if env.ID != nil {
		m.ID = ID{raw: env.ID}
	}
	m.Params, m.Result, m.Error = env.Params, env.Result, env.Error
	return m, nil
}
