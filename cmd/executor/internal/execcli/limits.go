package execcli

import "time"

// Wire constants.
const (
	// veof is the EOF character written to a remote PTY whose executor has no
	// process/closeStdin (released codex exec-servers): ^D, the default VEOF of
	// termios(3); the remote PTY's line discipline turns it into EOF at a line start.
	veof = 0x04
	// ptySignalExitCode is the exitCode an executor reports for a PTY child killed by a
	// signal (spec/jsonrpc.md §5.4, as the reference): the signal itself is only known
	// through process/exitStatus.
	ptySignalExitCode = 1
)

// Implementation limits, our choice.
const (
	// stdinChunk is the largest process/write, in bytes (one local read); well below the
	// 64 MiB message limit of the Noise channel and the 256 KiB relay frame, so a chunk
	// costs few records.
	stdinChunk = 32 << 10
	// signalCallTimeout bounds one forwarded signal or resize call, so that a call made
	// during a reconnect (harness.Dial recovers within 25 s) does not block later signals
	// for ever.
	signalCallTimeout = 30 * time.Second
)
