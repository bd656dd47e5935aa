package executor

import (
	"github.com/execlab/executor/executor/fs"
	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/executor/process"
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
// method, name → bind(family, lane, handler). A handler is a method of the family's
// package adapted by onProcs, onFS or onHandles, or, where the connection adds a step,
// a function in the family's *_methods.go file. Anything absent answers -32601 in any handshake state. Every request
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
	protocol.MethodProcessWrite:            bind(familyExec, ord, onProcs((*process.Manager).Write)),
	protocol.MethodProcessSignal:           bind(familyExec, control, onProcs((*process.Manager).Signal)),
	protocol.MethodProcessTerminate:        bind(familyExec, control, onProcs((*process.Manager).Terminate)),
	protocol.MethodProcessCloseStdin:       bind(familyExec, ord, onProcs((*process.Manager).CloseStdin)),
	protocol.MethodProcessResizePty:        bind(familyExec, control, onProcs((*process.Manager).ResizePty)),
	protocol.MethodProcessSendSignal:       bind(familyExec, control, onProcs((*process.Manager).SendSignal)),
	protocol.MethodProcessExitStatus:       bind(familyExec, control, onProcs((*process.Manager).ExitStatus)),
	protocol.MethodFsReadFile:              bind(familyFilesystem, ord, onFS((*fs.Service).ReadFile)),
	protocol.MethodFsWriteFile:             bind(familyFilesystem, ord, onFS((*fs.Service).WriteFile)),
	protocol.MethodFsCreateDirectory:       bind(familyFilesystem, ord, onFS((*fs.Service).CreateDirectory)),
	protocol.MethodFsGetMetadata:           bind(familyFilesystem, ord, onFS((*fs.Service).GetMetadata)),
	protocol.MethodFsCanonicalize:          bind(familyFilesystem, ord, onFS((*fs.Service).Canonicalize)),
	protocol.MethodFsReadDirectory:         bind(familyFilesystem, ord, onFS((*fs.Service).ReadDirectory)),
	protocol.MethodFsWalk:                  bind(familyFilesystem, ord, onFS((*fs.Service).Walk)),
	protocol.MethodFsRemove:                bind(familyFilesystem, ord, onFS((*fs.Service).Remove)),
	protocol.MethodFsCopy:                  bind(familyFilesystem, ord, onFS((*fs.Service).Copy)),
	protocol.MethodFsOpen:                  bind(familyFilesystem, ord, onHandles((*fs.Handles).Open)),
	protocol.MethodFsReadBlock:             bind(familyFilesystem, ord, onHandles((*fs.Handles).ReadBlock)),
	protocol.MethodFsWriteBlock:            bind(familyFilesystem, ord, onHandles((*fs.Handles).WriteBlock)),
	protocol.MethodFsWatchMissing:          bind(familyFilesystem, ord, fsWatchMissing),
	protocol.MethodFsClose:                 bind(familyFilesystem, control, onHandles((*fs.Handles).Close)),
	protocol.MethodHTTPRequest:             bind(familyHTTP, ord, httpRequest),
	protocol.MethodCapabilityRootsDiscover: bind(familyCapabilityDiscovery, ord, capabilityRootsDiscover),
	protocol.MethodCapabilitiesDiscoverV2:  bind(familyCapabilityDiscovery, ord, capabilitiesDiscoverV2),
	protocol.MethodTunnelOpen:              bind(familyTunnel, ord, tunnelOpen),
	protocol.MethodTunnelListen:            bind(familyTunnel, ord, tunnelListen),
	protocol.MethodTunnelUnlisten:          bind(familyTunnel, ord, tunnelUnlisten),
}
