package protocol

// Protocol extensions of this executor (docs/protocol-extensions.md). None exists in codex
// exec-server 0.169.0 or 0.171.0: a released executor answers -32601 to the methods and
// ignores the ptySize member of process/start (both observed), and never advertises the
// capability flags. Clients use an extension only when environment/info (or initialize)
// advertises its flag; a released client never sends any of it.
//
//	→ {"id":7,"method":"process/closeStdin","params":{"processId":"p"}}
//	← {"id":7,"result":{"status":"closed"}}
//	→ {"id":8,"method":"process/resizePty","params":{"processId":"p","size":{"rows":50,"cols":132}}}
//	← {"id":8,"result":{"status":"resized"}}
//	→ {"id":9,"method":"process/sendSignal","params":{"processId":"p","signal":"TERM"}}
//	← {"id":9,"result":{}}
//	→ {"id":10,"method":"process/exitStatus","params":{"processId":"p"}}
//	← {"id":10,"result":{"status":"exited","exitCode":1,"signal":15}}
//
// Names: `process/resize` is deliberately not used (spec/jsonrpc.md §3 pins it as an
// unknown method of the reference, and a future upstream method of that name may differ).

// Extension method names.
const (
	MethodProcessCloseStdin = "process/closeStdin"
	MethodProcessResizePty  = "process/resizePty"
	MethodProcessSendSignal = "process/sendSignal"
	MethodProcessExitStatus = "process/exitStatus"
	// MethodProcessAck is a client→server notification (docs/reliability.md):
	//
	//	→ {"method":"process/ack","params":{"processId":"p","seq":42}}
	MethodProcessAck = "process/ack"
)

// ProcessAckParams are the params of the process/ack notification: every event of the
// process with a seq ≤ Seq was consumed by the client.
type ProcessAckParams struct {
	ProcessID string `json:"processId"`
	Seq       uint64 `json:"seq"`
}

// ProcessExitStatusParams are the params of process/exitStatus.
type ProcessExitStatusParams struct {
	ProcessID string `json:"processId"`
}

// ExitStatusStatus is the outcome of process/exitStatus; every value is a successful
// result.
type ExitStatusStatus string

const (
	// ExitStatusExited: the process has exited; ExitCode is the code process/exited
	// carried and Signal, when the child died by a signal, its number.
	ExitStatusExited         ExitStatusStatus = "exited"
	ExitStatusRunning        ExitStatusStatus = "running"
	ExitStatusStarting       ExitStatusStatus = "starting"
	ExitStatusUnknownProcess ExitStatusStatus = "unknownProcess"
)

// ProcessExitStatusResult is the result of process/exitStatus. ExitCode and Signal are
// set only with status exited; Signal only when the child was killed by a signal (the
// wire exitCode is then 128+N with pipes and 1 with a PTY, which hides N; spec/jsonrpc.md
// §5.4).
type ProcessExitStatusResult struct {
	Status   ExitStatusStatus `json:"status"`
	ExitCode *int32           `json:"exitCode,omitempty"`
	Signal   *int32           `json:"signal,omitempty"`
}

// PtySize is a terminal size: Rows and Cols in character cells (each 1…65535), the pixel
// sizes optional (0 = unknown), as struct winsize of TIOCSWINSZ.
type PtySize struct {
	Rows        uint16 `json:"rows"`
	Cols        uint16 `json:"cols"`
	PixelWidth  uint16 `json:"pixelWidth,omitempty"`
	PixelHeight uint16 `json:"pixelHeight,omitempty"`
}

// ProcessCloseStdinParams are the params of process/closeStdin.
type ProcessCloseStdinParams struct {
	ProcessID string `json:"processId"`
}

// CloseStdinStatus is the outcome of process/closeStdin; every value is a successful
// result, as process/write's statuses are.
type CloseStdinStatus string

const (
	// CloseStdinClosed: pipes — the pipe is closed after the queued writes; PTY — the
	// terminal's VEOF character was queued after them. Also the answer to a repeat.
	CloseStdinClosed         CloseStdinStatus = "closed"
	CloseStdinUnknownProcess CloseStdinStatus = "unknownProcess"
	CloseStdinStarting       CloseStdinStatus = "starting"
	// CloseStdinNoStdin: a pipe process started without pipeStdin (its stdin is /dev/null).
	CloseStdinNoStdin CloseStdinStatus = "stdinClosed"
)

// ProcessCloseStdinResult is the result of process/closeStdin.
type ProcessCloseStdinResult struct {
	Status CloseStdinStatus `json:"status"`
}

// ProcessResizePtyParams are the params of process/resizePty.
type ProcessResizePtyParams struct {
	ProcessID string  `json:"processId"`
	Size      PtySize `json:"size"`
}

// ResizeStatus is the outcome of process/resizePty; every value is a successful result.
type ResizeStatus string

const (
	ResizeResized        ResizeStatus = "resized"
	ResizeUnknownProcess ResizeStatus = "unknownProcess"
	ResizeStarting       ResizeStatus = "starting"
	// ResizeNotPty: the process runs on pipes.
	ResizeNotPty ResizeStatus = "notPty"
	// ResizeExited: the process has exited; its terminal is gone.
	ResizeExited ResizeStatus = "exited"
)

// ProcessResizePtyResult is the result of process/resizePty.
type ProcessResizePtyResult struct {
	Status ResizeStatus `json:"status"`
}

// PosixSignal names a signal process/sendSignal can deliver: the RFC 4254 §6.10 signal
// names (as ssh's "signal" channel request uses them), without the SIG prefix.
type PosixSignal string

const (
	SignalINT  PosixSignal = "INT"
	SignalTERM PosixSignal = "TERM"
	SignalHUP  PosixSignal = "HUP"
	SignalQUIT PosixSignal = "QUIT"
	SignalKILL PosixSignal = "KILL"
	SignalUSR1 PosixSignal = "USR1"
	SignalUSR2 PosixSignal = "USR2"
)

// Variants makes PosixSignal a serde-style enum for jsonwire.UnmarshalParams.
func (PosixSignal) Variants() []string {
	return []string{"INT", "TERM", "HUP", "QUIT", "KILL", "USR1", "USR2"}
}

// ProcessSendSignalParams are the params of process/sendSignal.
type ProcessSendSignalParams struct {
	ProcessID string      `json:"processId"`
	Signal    PosixSignal `json:"signal"`
}

// ProcessSendSignalResult is the (empty) result of process/sendSignal.
type ProcessSendSignalResult struct{}
