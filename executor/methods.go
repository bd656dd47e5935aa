package executor

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/executor/protocol"
)

// Method families, used in the handshake-order messages (spec/jsonrpc.md §1.4).
const (
	familyExec       = "exec"
	familyFilesystem = "filesystem"
	familyHTTP       = "http"
	familyEnvInfo    = "environment info"
	familyEnvStatus  = "environment status"
)

// methods is the routing table. Anything absent answers -32601 in any handshake state.
var methods = map[string]method{}

func register(name string, m method) {
	if _, dup := methods[name]; dup {
		panic("executor: method registered twice: " + name)
	}
	methods[name] = m
}

func init() {
	register(protocol.MethodInitialize, bind(familyExec, jsonrpc.LaneSerial, handleInitialize))
	register(protocol.MethodEnvironmentInfo, bindUnit(familyEnvInfo, jsonrpc.LaneControl, handleEnvironmentInfo))
	register(protocol.MethodEnvironmentStatus, bindUnit(familyEnvStatus, jsonrpc.LaneControl, handleEnvironmentStatus))
}

// decodeUnit accepts absent, null and {} params, like serde's unit (spec/jsonrpc.md §1.5).
func decodeUnit(raw json.RawMessage) error {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(t))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return jsonrpc.InvalidParams("%s", err.Error())
	}
	var what string
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return nil
		}
		what = "map"
	case []any:
		what = "sequence"
	case string:
		what = fmt.Sprintf("string %q", x)
	case bool:
		what = fmt.Sprintf("boolean `%t`", x)
	case json.Number:
		what = "number" // the reference decodes params from a JSON value: numbers are untyped
	}
	return jsonrpc.InvalidParams("invalid type: %s, expected unit", what)
}
