package protocol

import "sort"

// MethodProps are the properties of a request method that both ends of the protocol
// need: the executor's method table (executor/methods.go) serves exactly the methods
// listed here, and the harness's recovery reads RetrySafe. Keep one line per method.
type MethodProps struct {
	// RetrySafe: a recovery may re-send the request as it was, because repeating it
	// cannot apply anything twice (it only reads, is idempotent, or dedupes on its own
	// key, as process/write does by writeId).
	RetrySafe bool
}

// requests holds every request method, one line each; notifications holds every
// notification method (either direction). A name is in exactly one of them.
var requests = map[string]MethodProps{
	MethodInitialize:              {},
	MethodProcessStart:            {},
	MethodProcessRead:             {RetrySafe: true},
	MethodProcessWrite:            {RetrySafe: true}, // dedupes by writeId
	MethodProcessSignal:           {},
	MethodProcessTerminate:        {RetrySafe: true},
	MethodProcessCloseStdin:       {},
	MethodProcessResizePty:        {RetrySafe: true}, // sets an absolute size
	MethodProcessSendSignal:       {},
	MethodProcessExitStatus:       {RetrySafe: true}, // read-only
	MethodFsReadFile:              {RetrySafe: true},
	MethodFsWriteFile:             {},
	MethodFsCreateDirectory:       {},
	MethodFsGetMetadata:           {RetrySafe: true},
	MethodFsCanonicalize:          {RetrySafe: true},
	MethodFsReadDirectory:         {RetrySafe: true},
	MethodFsWalk:                  {RetrySafe: true},
	MethodFsRemove:                {},
	MethodFsCopy:                  {},
	MethodFsOpen:                  {},
	MethodFsReadBlock:             {},
	MethodFsWriteBlock:            {},
	MethodFsWatchMissing:          {},
	MethodFsClose:                 {},
	MethodHTTPRequest:             {},
	MethodEnvironmentInfo:         {RetrySafe: true},
	MethodEnvironmentStatus:       {RetrySafe: true},
	MethodEnvironmentConfigRead:   {RetrySafe: true}, // only reads files
	MethodCapabilityRootsDiscover: {RetrySafe: true}, // read-only scan
	MethodCapabilitiesDiscoverV2:  {RetrySafe: true}, // read-only scan
	MethodTunnelOpen:              {},
	MethodTunnelListen:            {}, // binds a port: not repeated on recovery
	MethodTunnelUnlisten:          {},
}

var notifications = map[string]bool{
	MethodInitialized:      true,
	MethodProcessOutput:    true,
	MethodProcessExited:    true,
	MethodProcessClosed:    true,
	MethodProcessAck:       true,
	MethodFsMissingChanged: true,
	MethodHTTPBodyDelta:    true,
	MethodTunnelData:       true,
	MethodTunnelAck:        true,
	MethodTunnelEOF:        true,
	MethodTunnelClose:      true,
	MethodTunnelAccepted:   true,
}

// Props reports the properties of request method name; ok is false for a notification
// or an unknown name.
func Props(name string) (p MethodProps, ok bool) {
	p, ok = requests[name]
	return p, ok
}

// RetrySafe reports whether request method name may be re-sent as it was (MethodProps).
func RetrySafe(name string) bool { return requests[name].RetrySafe }

// IsNotification reports whether name is a notification method.
func IsNotification(name string) bool { return notifications[name] }

// RequestMethods returns every request method name, sorted.
func RequestMethods() []string {
	names := make([]string, 0, len(requests))
	for name := range requests {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
