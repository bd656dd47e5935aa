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
	// scanned: Params passed jsonwire's scanner when the Client read the message
	// (parseMessage), so it is walked without another check (walkable).
	scanned bool
}

// walkable reports whether Params may be walked with jsonwire.ObjectMembers: it passed the
// scanner when the Client read it, or passes it now (a Notification made by hand).
func (n Notification) walkable() bool { return n.scanned || jsonwire.Validate(n.Params) == nil }

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
	if n.walkable() && decodeOutputFastInto(n.Params, &out, nil) {
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
	if !n.walkable() {
		return "", false
	}
	// The walk stops at processId (executors send it first), so a large chunk after it is
	// not scanned again just to find the id (issue 16).
	return memberString(n.Params, "processId")
}

// processOutputPooled is ProcessOutput with the chunk decoded into a pooled buffer when it
// is large enough to be pooled: storage hands it back (nil when the chunk is not pooled).
// The result never aliases n.Params.
func (n Notification) processOutputPooled() (protocol.ProcessOutputNotification, *msgStorage, error) {
	var out protocol.ProcessOutputNotification
	if n.Method == protocol.MethodProcessOutput && n.walkable() {
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
// integer seq and strict padded base64. It reports false otherwise (params included, when
// it is not valid JSON), leaving out partly set. The chunk is freshly allocated.
func decodeOutputFast(params []byte, out *protocol.ProcessOutputNotification) bool {
	return jsonwire.Validate(params) == nil && decodeOutputFastInto(params, out, nil)
}

// decodeOutputFastInto is decodeOutputFast on walkable params (they passed jsonwire's
// scanner) that, when pooled is not nil, decodes a chunk large enough to be pooled into a
// pooled buffer and sets *pooled to its storage. On false, nothing is left pooled.
func decodeOutputFastInto(params []byte, out *protocol.ProcessOutputNotification, pooled **msgStorage) (ok bool) {
	if pooled != nil {
		defer func() {
			if !ok {
				(*pooled).free()
				*pooled = nil
			}
		}()
	}
	var seen int
	failed := false
	ok = jsonwire.ObjectMembers(params, func(key, val []byte) bool {
		bit := outputMember(key, val, out, pooled, seen)
		seen |= bit
		failed = bit == 0
		return !failed
	})
	return ok && !failed && seen == 15
}

// outputMember decodes one member of process/output params into out and returns its bit in
// decodeOutputFastInto's seen set, or 0 when the fast path does not take it (a repeated
// chunk, an unknown member, an escape or a value of another shape).
func outputMember(key, val []byte, out *protocol.ProcessOutputNotification, pooled **msgStorage, seen int) int {
	var err error
	switch string(key) {
	case "processId":
		out.ProcessID, err = jsonwire.String(val)
		return okBit(err == nil, 1)
	case "seq":
		var ok bool
		out.Seq, ok = parseJSONUint(val)
		return okBit(ok, 2)
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
			var s string
			s, err = jsonwire.String(val)
			out.Stream = protocol.ExecOutputStream(s)
		}
		return okBit(err == nil, 4)
	case "chunk":
		if seen&8 != 0 {
			return 0 // a repeated member: let encoding/json decide
		}
		b, st, ok := decodeBase64Fast(val, pooled != nil)
		if !ok {
			return 0
		}
		out.Chunk = b
		if pooled != nil {
			*pooled = st
		}
		return 8
	}
	return 0 // unknown member: let encoding/json decide
}

func okBit(ok bool, bit int) int {
	if ok {
		return bit
	}
	return 0
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
