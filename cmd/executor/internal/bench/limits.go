package bench

import "time"

// Implementation constants (our choice; none is fixed by the wire).
const (
	// DefaultRuns is the number of measured samples per side and row (after one warm-up
	// sample per side). Five gives a usable median on a quiet machine.
	DefaultRuns = 5
	// QuickRuns is DefaultRuns under --quick (CI: seconds, not minutes).
	QuickRuns = 2

	// oneshotPerSample is how many sequential /bin/true processes one oneshot_local sample
	// runs; the sample is their median latency.
	oneshotPerSample      = 40
	oneshotPerSampleQuick = 5

	// stdoutBytes is how much `head -c` writes in one stdout_local sample, in bytes
	// (issue 7: 256 MiB; --quick: 16 MiB).
	stdoutBytes      = 256 << 20
	stdoutBytesQuick = 16 << 20

	// rssSettle is how long rss_idle waits after the handshake before reading VmRSS, so
	// that start-up allocations have been returned or at least stopped growing.
	rssSettle      = time.Second
	rssSettleQuick = 300 * time.Millisecond

	// startTimeout bounds an executor's start-up until it prints its ws:// URL.
	startTimeout = 20 * time.Second
	// stopTimeout is how long an executor gets to exit after SIGTERM before SIGKILL.
	stopTimeout = 5 * time.Second
	// callTimeout bounds each JSON-RPC call and each short process run.
	callTimeout = 30 * time.Second
	// streamTimeout bounds one stdout_local sample.
	streamTimeout = 10 * time.Minute

	// stderrTail is how much of an executor's stderr is kept for error messages, in bytes.
	stderrTail = 4 << 10

	// mebibyte converts bytes to MiB.
	mebibyte = 1 << 20
)
