package protocol

// Wire types of the process/* methods and notifications (spec/jsonrpc.md §3.1–§3.5, §5.5).
//
// Protocol flow: process/start inserts a client-keyed process; its output, exit and close
// events share one per-process seq counter starting at 1 and are pushed as process/output,
// process/exited and process/closed notifications while a connection is attached, and
// recovered with process/read (cursor afterSeq, exclusive) otherwise.
//
//	← {"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":"aGkK"}}
//	← {"method":"process/exited","params":{"processId":"p","seq":2,"exitCode":0,"sandboxDenied":false}}
//	← {"method":"process/closed","params":{"processId":"p","seq":3}}

import (
	"encoding/json"
	"strconv"

	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox/policy"
)

// ExecOutputStream labels an output chunk: "stdout" and "stderr" with pipes, "pty" with a PTY.
type ExecOutputStream string

const (
	StreamStdout ExecOutputStream = "stdout"
	StreamStderr ExecOutputStream = "stderr"
	StreamPty    ExecOutputStream = "pty"
)

// EnvInherit selects the base environment of an ExecEnvPolicy.
type EnvInherit string

const (
	EnvInheritAll  EnvInherit = "all"
	EnvInheritCore EnvInherit = "core"
	EnvInheritNone EnvInherit = "none"
)

// Variants makes EnvInherit a serde-style enum for jsonwire.UnmarshalParams.
func (EnvInherit) Variants() []string { return []string{"core", "all", "none"} }

// ExecEnvPolicy computes a child environment from the server's (spec/jsonrpc.md §5.5).
// All five members are required and none may be null.
type ExecEnvPolicy struct {
	Inherit               EnvInherit        `json:"inherit"`
	IgnoreDefaultExcludes bool              `json:"ignoreDefaultExcludes"`
	Exclude               []string          `json:"exclude"`
	Set                   map[string]string `json:"set"`
	IncludeOnly           []string          `json:"includeOnly"`
}

// ProcessStartParams are the params of process/start (spec/jsonrpc.md §3.1).
type ProcessStartParams struct {
	ProcessID string   `json:"processId"`
	Argv      []string `json:"argv"`
	// Cwd must convert to a native absolute path on this host (PathURI.NativeCwd).
	Cwd       PathURI           `json:"cwd"`
	Env       map[string]string `json:"env"`
	Tty       bool              `json:"tty"`
	PipeStdin bool              `json:"pipeStdin,omitempty"`
	// Arg0 overrides argv[0] as the program sees it; nil = absent.
	Arg0      *string        `json:"arg0"`
	EnvPolicy *ExecEnvPolicy `json:"envPolicy"`
	// Sandbox is the decoded FileSystemSandboxContext (spec/jsonrpc.md §6); nil (absent or
	// null) = none. Its decoder returns the reference's serde texts.
	Sandbox               *policy.Context `json:"sandbox,omitempty"`
	EnforceManagedNetwork bool            `json:"enforceManagedNetwork,omitempty"`
	// ManagedNetwork, NetworkProxy, ShellSnapshot and Metadata are kept raw: the executor
	// declines network proxies and shell snapshots (§3.9) and ignores metadata.
	ManagedNetwork json.RawMessage `json:"managedNetwork,omitempty"`
	NetworkProxy   json.RawMessage `json:"networkProxy,omitempty"`
	ShellSnapshot  json.RawMessage `json:"shellSnapshot,omitempty"`
	Metadata       json.RawMessage `json:"metadata,omitempty"`
	// PtySize is an extension (docs/protocol-extensions.md, capability
	// processStartPtySize): the PTY's initial size; nil = absent or null = 24×80. Ignored
	// with pipes. Released executors ignore the member (observed from 0.169.0, 0.171.0).
	PtySize *PtySize `json:"ptySize,omitempty"`
	// OutputAck is an extension (docs/reliability.md, capability processOutputAck): the
	// client acknowledges this process's events with process/ack, and the executor keeps
	// every unacknowledged event instead of the 1 MiB ring. Released executors ignore the
	// member; clients send it only when the flag is advertised.
	OutputAck bool `json:"outputAck,omitempty"`
}

// Sandbox types reported by process/start.
const (
	SandboxTypeNone         = "none"
	SandboxTypeLinuxSeccomp = "linuxSeccomp"
)

// ProcessStartResult is the result of process/start; SandboxType is always sent.
type ProcessStartResult struct {
	ProcessID   string `json:"processId"`
	SandboxType string `json:"sandboxType"`
}

// ProcessReadParams are the params of process/read (spec/jsonrpc.md §3.2).
type ProcessReadParams struct {
	ProcessID string  `json:"processId"`
	AfterSeq  *uint64 `json:"afterSeq"` // nil = 0
	MaxBytes  *uint64 `json:"maxBytes"` // nil = unlimited
	WaitMs    *uint64 `json:"waitMs"`   // nil = 0
}

// ProcessOutputChunk is one retained output chunk.
type ProcessOutputChunk struct {
	Seq    uint64           `json:"seq"`
	Stream ExecOutputStream `json:"stream"`
	Chunk  jsonwire.Bytes   `json:"chunk"`
}

// ProcessReadResult is the result of process/read. Failure is always null from the server.
type ProcessReadResult struct {
	Chunks        []ProcessOutputChunk `json:"chunks"`
	NextSeq       uint64               `json:"nextSeq"`
	Exited        bool                 `json:"exited"`
	ExitCode      *int32               `json:"exitCode"`
	Closed        bool                 `json:"closed"`
	Failure       *string              `json:"failure"`
	SandboxDenied bool                 `json:"sandboxDenied"`
}

// AppendJSON appends the JSON encoding of r (same bytes as encoding/json would produce,
// apart from serde's string escaping).
func (r *ProcessReadResult) AppendJSON(b []byte) []byte {
	b = append(b, `{"chunks":[`...)
	for i := range r.Chunks {
		if i > 0 {
			b = append(b, ',')
		}
		c := &r.Chunks[i]
		b = append(b, `{"seq":`...)
		b = strconv.AppendUint(b, c.Seq, 10)
		b = append(b, `,"stream":`...)
		b = appendProcessJSONString(b, string(c.Stream))
		b = append(b, `,"chunk":`...)
		b = c.Chunk.AppendJSON(b)
		b = append(b, '}')
	}
	b = append(b, `],"nextSeq":`...)
	b = strconv.AppendUint(b, r.NextSeq, 10)
	b = append(b, `,"exited":`...)
	b = strconv.AppendBool(b, r.Exited)
	b = append(b, `,"exitCode":`...)
	if r.ExitCode == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*r.ExitCode), 10)
	}
	b = append(b, `,"closed":`...)
	b = strconv.AppendBool(b, r.Closed)
	b = append(b, `,"failure":`...)
	if r.Failure == nil {
		b = append(b, "null"...)
	} else {
		b = appendProcessJSONString(b, *r.Failure)
	}
	b = append(b, `,"sandboxDenied":`...)
	b = strconv.AppendBool(b, r.SandboxDenied)
	return append(b, '}')
}

// WriteStatus is the outcome of process/write; every value is a successful result.
type WriteStatus string

const (
	WriteAccepted       WriteStatus = "accepted"
	WriteUnknownProcess WriteStatus = "unknownProcess"
	WriteStarting       WriteStatus = "starting"
	WriteStdinClosed    WriteStatus = "stdinClosed"
)

// ProcessWriteParams are the params of process/write (spec/jsonrpc.md §3.3).
type ProcessWriteParams struct {
	ProcessID string         `json:"processId"`
	Chunk     jsonwire.Bytes `json:"chunk"`
	WriteID   string         `json:"writeId"`
}

// ProcessWriteResult is the result of process/write.
type ProcessWriteResult struct {
	Status WriteStatus `json:"status"`
}

// ProcessSignal names a signal process/signal can send; only "interrupt" exists.
type ProcessSignal string

// SignalInterrupt is SIGINT to the process group on unix.
const SignalInterrupt ProcessSignal = "interrupt"

// Variants makes ProcessSignal a serde-style enum for jsonwire.UnmarshalParams.
func (ProcessSignal) Variants() []string { return []string{"interrupt"} }

// ProcessSignalParams are the params of process/signal (spec/jsonrpc.md §3.4).
type ProcessSignalParams struct {
	ProcessID string        `json:"processId"`
	Signal    ProcessSignal `json:"signal"`
}

// ProcessSignalResult is the (empty) result of process/signal.
type ProcessSignalResult struct{}

// ProcessTerminateParams are the params of process/terminate (spec/jsonrpc.md §3.4).
type ProcessTerminateParams struct {
	ProcessID string `json:"processId"`
}

// ProcessTerminateResult is the result of process/terminate.
type ProcessTerminateResult struct {
	Running bool `json:"running"`
}

// ProcessOutputNotification is the params of process/output. It has a hand-written
// encoder because stdout throughput depends on it.
type ProcessOutputNotification struct {
	ProcessID string           `json:"processId"`
	Seq       uint64           `json:"seq"`
	Stream    ExecOutputStream `json:"stream"`
	Chunk     jsonwire.Bytes   `json:"chunk"`
}

// AppendJSON appends {"processId":…,"seq":…,"stream":…,"chunk":…} to b.
func (n *ProcessOutputNotification) AppendJSON(b []byte) []byte {
	b = append(b, `{"processId":`...)
	b = appendProcessJSONString(b, n.ProcessID)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, n.Seq, 10)
	b = append(b, `,"stream":`...)
	b = appendProcessJSONString(b, string(n.Stream))
	b = append(b, `,"chunk":`...)
	b = n.Chunk.AppendJSON(b)
	return append(b, '}')
}

// ProcessExitedNotification is the params of process/exited. Readers tolerate an absent
// or null sandboxDenied; the server always sends it.
type ProcessExitedNotification struct {
	ProcessID     string `json:"processId"`
	Seq           uint64 `json:"seq"`
	ExitCode      int32  `json:"exitCode"`
	SandboxDenied bool   `json:"sandboxDenied"`
}

// ProcessClosedNotification is the params of process/closed.
type ProcessClosedNotification struct {
	ProcessID string `json:"processId"`
	Seq       uint64 `json:"seq"`
}

// appendProcessJSONString appends s as a JSON string escaped as serde_json does
// (jsonwire.AppendSerdeString), for the hand-written encoders of this package.
func appendProcessJSONString(b []byte, s string) []byte { return jsonwire.AppendSerdeString(b, s) }
