package executor

import (
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
