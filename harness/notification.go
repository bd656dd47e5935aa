package harness

// Server→client notifications (spec/jsonrpc.md §3.5, §3.7).
//
// process/output is decoded by hand (decodeOutputFast): it is the one message whose volume
// scales with a child's output, and a generic decode would make the client, not the
// executor, the bottleneck of a stdout stream. Anything the fast path does not expect
// (escapes, unusual members, a non-integer seq) falls back to encoding/json, so the result
// never depends on which path ran.

import (
	"encoding/json"
	"fmt"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// Notification is one server→client notification. Params is the raw JSON (nil when
// absent); it is owned by the receiver and is not reused by the Client unless the
// receiver hands it back with Release.
type Notification struct {
	Method string
	Params json.RawMessage

	// storage is the pooled message buffer Params lies in, when the transport pools them
	// (storage.go); nil otherwise.
	storage *msgStorage
}

// Release hands the notification's storage back to the transport it came from, for a
// later message: Params, and anything decoded from it that aliases it, must not be used
// afterwards, by anyone it was passed to. Optional: without it the storage is simply
// collected. Releasing a notification twice, or one whose transport does not pool, does
// nothing. ProcessEvents.Take releases the notifications it is given.
func (n Notification) Release() { n.storage.free() }

// Unmarshal decodes Params into v with encoding/json.
func (n Notification) Unmarshal(v any) error {
	p := n.Params
	if p == nil {
		p = json.RawMessage("null")
	}
	if err := json.Unmarshal(p, v); err != nil {
		return fmt.Errorf("decoding %s params: %w", n.Method, err)
	}
	return nil
}

// ProcessOutput decodes a process/output notification. The returned Chunk is freshly
// allocated.
func (n Notification) ProcessOutput() (protocol.ProcessOutputNotification, error) {
	var out protocol.ProcessOutputNotification
	if n.Method != protocol.MethodProcessOutput {
		return out, fmt.Errorf("decoding process/output: notification is %s", n.Method)
	}
	if decodeOutputFast(n.Params, &out) {
		return out, nil
	}
	out = protocol.ProcessOutputNotification{}
	if err := n.Unmarshal(&out); err != nil {
		return out, err
	}
	return out, nil
}

// ProcessExited decodes a process/exited notification. An absent or null sandboxDenied
// decodes as false (old servers).
func (n Notification) ProcessExited() (protocol.ProcessExitedNotification, error) {
	var wire struct {
		ProcessID     string `json:"processId"`
		Seq           uint64 `json:"seq"`
		ExitCode      int32  `json:"exitCode"`
		SandboxDenied *bool  `json:"sandboxDenied"`
	}
	if n.Method != protocol.MethodProcessExited {
		return protocol.ProcessExitedNotification{}, fmt.Errorf("decoding process/exited: notification is %s", n.Method)
	}
	if err := n.Unmarshal(&wire); err != nil {
		return protocol.ProcessExitedNotification{}, err
	}
	return protocol.ProcessExitedNotification{
		ProcessID:     wire.ProcessID,
		Seq:           wire.Seq,
		ExitCode:      wire.ExitCode,
		SandboxDenied: wire.SandboxDenied != nil && *wire.SandboxDenied,
	}, nil
}

// ProcessClosed decodes a process/closed notification.
func (n Notification) ProcessClosed() (protocol.ProcessClosedNotification, error) {
	var out protocol.ProcessClosedNotification
	if n.Method != protocol.MethodProcessClosed {
		return out, fmt.Errorf("decoding process/closed: notification is %s", n.Method)
	}
	err := n.Unmarshal(&out)
	return out, err
}

// ProcessID returns the processId of a process/* notification without decoding the rest,
// and false for other notifications or when it cannot be found cheaply.
func (n Notification) ProcessID() (string, bool) {
	switch n.Method {
	case protocol.MethodProcessOutput, protocol.MethodProcessExited, protocol.MethodProcessClosed:
	default:
		return "", false
	}
	var id string
	found := false
	if len(n.Params) == 0 || n.Params[0] != '{' {
		return "", false
	}
	// The walk stops at processId (executors send it first), so a large chunk after it is
	// not scanned again just to find the id (issue 16).
	err := forEachMember(n.Params, 0, func(key, val []byte) error {
		if string(key) == "processId" {
			s, ok := decodeString(val)
			if !ok {
				return errBadSyntax
			}
			id, found = s, true
			return errFound
		}
		return nil
	})
	return id, (err == nil || err == errFound) && found
}

// processOutputPooled is ProcessOutput with the chunk decoded into a pooled buffer when it
// is large enough to be pooled: storage hands it back (nil when the chunk is not pooled).
// The result never aliases n.Params.
func (n Notification) processOutputPooled() (protocol.ProcessOutputNotification, *msgStorage, error) {
	var out protocol.ProcessOutputNotification
	if n.Method == protocol.MethodProcessOutput {
		var st *msgStorage
		if decodeOutputFastInto(n.Params, &out, &st) {
			return out, st, nil
		}
	}
	out, err := n.ProcessOutput()
	return out, nil, err
}

// decodeOutputFast decodes the params of process/output when they have the expected
// shape: exactly processId, seq, stream and chunk (any order), plain strings, an unsigned
// integer seq and strict padded base64. It reports false otherwise, leaving out partly set.
// The chunk is freshly allocated.
func decodeOutputFast(params []byte, out *protocol.ProcessOutputNotification) bool {
	return decodeOutputFastInto(params, out, nil)
}

// decodeOutputFastInto is decodeOutputFast that, when pooled is not nil, decodes a chunk
// large enough to be pooled into a pooled buffer and sets *pooled to its storage. On
// false, nothing is left pooled.
func decodeOutputFastInto(params []byte, out *protocol.ProcessOutputNotification, pooled **msgStorage) (ok bool) {
	if pooled != nil {
		defer func() {
			if !ok {
				(*pooled).free()
				*pooled = nil
			}
		}()
	}
	if len(params) == 0 || params[0] != '{' {
		return false
	}
	var seen int
	err := forEachMember(params, 0, func(key, val []byte) error {
		switch string(key) {
		case "processId":
			s, ok := decodeString(val)
			if !ok {
				return errBadSyntax
			}
			out.ProcessID = s
			seen |= 1
		case "seq":
			n, ok := parseJSONUint(val)
			if !ok {
				return errBadSyntax
			}
			out.Seq = n
			seen |= 2
		case "stream":
			// The three known labels are interned: no allocation per chunk.
			switch string(val) {
			case `"stdout"`:
				out.Stream = protocol.StreamStdout
			case `"stderr"`:
				out.Stream = protocol.StreamStderr
			case `"pty"`:
				out.Stream = protocol.StreamPty
			default:
				s, ok := decodeString(val)
				if !ok {
					return errBadSyntax
				}
				out.Stream = protocol.ExecOutputStream(s)
			}
			seen |= 4
		case "chunk":
			if seen&8 != 0 {
				return errBadSyntax // a repeated member: let encoding/json decide
			}
			b, st, ok := decodeBase64Fast(val, pooled != nil)
			if !ok {
				return errBadSyntax
			}
			out.Chunk = b
			if pooled != nil {
				*pooled = st
			}
			seen |= 8
		default:
			return errBadSyntax // unknown member: let encoding/json decide
		}
		return nil
	})
	return err == nil && seen == 15
}

// decodeBase64Fast decodes a raw JSON string of strict standard base64 with padding, into
// a pooled buffer (and its storage) when pooled is set and the result is large enough.
func decodeBase64Fast(raw []byte, pooled bool) ([]byte, *msgStorage, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, nil, false
	}
	src := raw[1 : len(raw)-1]
	var dst []byte
	var st *msgStorage
	if pooled {
		dst, st = getChunk(len(src) / 4 * 3)
	}
	// An escape (a backslash) is not base64, so the decode fails on it and the slow path
	// unquotes first; no separate scan for one.
	out, err := jsonwire.DecodeBase64Into(dst, src)
	if err != nil {
		st.free()
		return nil, nil, false
	}
	return out, st, true
}
