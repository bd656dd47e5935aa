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

// Lanes, abbreviated so that the table keeps one line per method.
const (
	serial  = jsonrpc.LaneSerial
	ord     = jsonrpc.LaneOrdinary
	control = jsonrpc.LaneControl
)

// methods is the routing table, the one place a request method is served: one line per
// method, name → bind(family, lane, handler); the handlers live in the *_methods.go file
// of their family. Anything absent answers -32601 in any handshake state. Every request
// method of executor/protocol (method_props.go) is here and nothing else is
// (TestMethodTableMatchesProtocol).
//
// Lanes (concurrent mode): control for what must not wait behind a long-poll, ordinary
// otherwise. process/closeStdin shares process/write's lane: it is the last "write".
// tunnel/open is ordinary: the dial may take up to tunnel.DialTimeout.
var methods = map[string]method{
	protocol.MethodInitialize:              bind(familyExec, serial, handleInitialize),
	protocol.MethodEnvironmentInfo:         bindUnit(familyEnvInfo, control, handleEnvironmentInfo),
	protocol.MethodEnvironmentStatus:       bindUnit(familyEnvStatus, control, handleEnvironmentStatus),
	protocol.MethodEnvironmentConfigRead:   bind(familyEnvConfig, ord, environmentConfigRead),
	protocol.MethodProcessStart:            bind(familyExec, ord, processStart),
	protocol.MethodProcessRead:             bind(familyExec, ord, processRead),
	protocol.MethodProcessWrite:            bind(familyExec, ord, processWrite),
	protocol.MethodProcessSignal:           bind(familyExec, control, processSignal),
	protocol.MethodProcessTerminate:        bind(familyExec, control, processTerminate),
	protocol.MethodProcessCloseStdin:       bind(familyExec, ord, processCloseStdin),
	protocol.MethodProcessResizePty:        bind(familyExec, control, processResizePty),
	protocol.MethodProcessSendSignal:       bind(familyExec, control, processSendSignal),
	protocol.MethodProcessExitStatus:       bind(familyExec, control, processExitStatus),
	protocol.MethodFsReadFile:              bind(familyFilesystem, ord, fsReadFile),
	protocol.MethodFsWriteFile:             bind(familyFilesystem, ord, fsWriteFile),
	protocol.MethodFsCreateDirectory:       bind(familyFilesystem, ord, fsCreateDirectory),
	protocol.MethodFsGetMetadata:           bind(familyFilesystem, ord, fsGetMetadata),
	protocol.MethodFsCanonicalize:          bind(familyFilesystem, ord, fsCanonicalize),
	protocol.MethodFsReadDirectory:         bind(familyFilesystem, ord, fsReadDirectory),
	protocol.MethodFsWalk:                  bind(familyFilesystem, ord, fsWalk),
	protocol.MethodFsRemove:                bind(familyFilesystem, ord, fsRemove),
	protocol.MethodFsCopy:                  bind(familyFilesystem, ord, fsCopy),
	protocol.MethodFsOpen:                  bind(familyFilesystem, ord, fsOpen),
	protocol.MethodFsReadBlock:             bind(familyFilesystem, ord, fsReadBlock),
	protocol.MethodFsWriteBlock:            bind(familyFilesystem, ord, fsWriteBlock),
	protocol.MethodFsWatchMissing:          bind(familyFilesystem, ord, fsWatchMissing),
	protocol.MethodFsClose:                 bind(familyFilesystem, control, fsClose),
	protocol.MethodHTTPRequest:             bind(familyHTTP, ord, httpRequest),
	protocol.MethodCapabilityRootsDiscover: bind(familyCapabilityDiscovery, ord, capabilityRootsDiscover),
	protocol.MethodCapabilitiesDiscoverV2:  bind(familyCapabilityDiscovery, ord, capabilitiesDiscoverV2),
	protocol.MethodTunnelOpen:              bind(familyTunnel, ord, tunnelOpen),
	protocol.MethodTunnelListen:            bind(familyTunnel, ord, tunnelListen),
	protocol.MethodTunnelUnlisten:          bind(familyTunnel, ord, tunnelUnlisten),
}
