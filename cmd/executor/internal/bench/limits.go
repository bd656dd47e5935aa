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

	// readBlockFileBytes is the size of the file readblock_local reads, in bytes (issue 7:
	// 1 GiB; --quick: 32 MiB), and readBlockLen the len of each fs/readBlock, in bytes: the
	// wire maximum (spec/jsonrpc.md §3.6: 1 … 1,048,576).
	readBlockFileBytes      = 1 << 30
	readBlockFileBytesQuick = 32 << 20
	readBlockLen            = 1 << 20

	// writeBlockFileBytes is how much writeblock_local writes, in bytes (issue 28: 256 MiB;
	// --quick: 16 MiB), in blocks of writeBlockLen bytes (the wire maximum,
	// capabilities-0.171.0.md §8.2) cycling through writeBlockDistinct distinct blocks.
	writeBlockFileBytes      = 256 << 20
	writeBlockFileBytesQuick = 16 << 20
	writeBlockLen            = 1 << 20
	writeBlockDistinct       = 8

	// watchMissingTimeout bounds one watchmissing_latency wait for fs/missingChanged.
	watchMissingTimeout = 5 * time.Second

	// walkEntries is the size of the tree walk_local walks, in entries (issue 7: 50,000;
	// --quick: 2,000), built as directories of walkFilesPerDir files each: one directory
	// entry plus its files make walkFilesPerDir+1 entries.
	walkEntries      = 50_000
	walkEntriesQuick = 2_000
	walkFilesPerDir  = 99
	// walkEntriesPerCall is the most entries one fs/walk of the tree returns. The
	// executor's estimated response budget is 4 MiB at (URI length + 64) bytes per entry
	// (spec/jsonrpc.md §3.6), which 50,000 entries under a /var/tmp path exceed, so the tree
	// is split into parts of at most this many entries, walked one call each.
	walkEntriesPerCall = 12_500
	// walkMaxDepth, walkMaxDirectories and walkMaxEntries are the fs/walk options: the wire
	// maxima (spec/jsonrpc.md §3.6), so only the tree bounds a walk.
	walkMaxDepth       = 64
	walkMaxDirectories = 10_000
	walkMaxEntries     = 50_000

	// httpBodyBytes is the size of the body http_stream_local streams, in bytes (issue 7:
	// 256 MiB; --quick: 16 MiB); httpPatternBytes the length of the random pattern the body
	// repeats, and httpWriteChunk the server's write size.
	httpBodyBytes      = 256 << 20
	httpBodyBytesQuick = 16 << 20
	httpPatternBytes   = 1 << 20
	httpWriteChunk     = 256 << 10

	// proxyBodyBytes is how much proxy_cpu downloads through the proxy, in bytes (issue 29:
	// 256 MiB; --quick: 16 MiB).
	proxyBodyBytes      = 256 << 20
	proxyBodyBytesQuick = 16 << 20
	// proxySetupsPerSample is how many tunnels one proxy_setup sample opens one after
	// another; the sample is their median.
	proxySetupsPerSample      = 200
	proxySetupsPerSampleQuick = 20
	// proxyIdleTunnels is how many idle tunnels proxy_idle_memory holds (--quick: 100):
	// 250, under our proxy's bound of 512 tracked connections (executor/netproxy
	// maxTrackedConns), which a tunnel takes two of; at 1,000 our proxy resets tunnel 257.
	proxyIdleTunnels      = 250
	proxyIdleTunnelsQuick = 100

	// handshakesPerSample is how many complete handshakes (both roles) one handshakes
	// sample runs, spread over one goroutine per CPU.
	handshakesPerSample      = 400
	handshakesPerSampleQuick = 100
	// responderHandshakesPerSample is how many responder handshakes one
	// handshakes_responder sample times, in batches of responderBatch (the initiators of
	// one batch wait for message 2 at a time: row_handshakes_responder.go).
	responderHandshakesPerSample      = 2000
	responderHandshakesPerSampleQuick = 200
	responderBatch                    = 64

	// relayStreamBytes is how much `head -c` writes in one relay_stream sample, in bytes
	// (256 MiB as stdout_local; --quick: 16 MiB, issue 7).
	relayStreamBytes      = 256 << 20
	relayStreamBytesQuick = 16 << 20

	// parallelStreams is how many connections stdout_parallel streams on at once, each
	// running `head -c parallelBytes` (issue 16: 8 × 64 MiB; --quick: 8 × 4 MiB).
	parallelStreams    = 8
	parallelBytes      = 64 << 20
	parallelBytesQuick = 4 << 20

	// clockTick is the unit of utime and stime in /proc/PID/stat: USER_HZ, which is 100
	// on every Linux architecture Go supports (proc(5), sysconf(_SC_CLK_TCK)).
	clockTick = 10 * time.Millisecond

	// oneshotRemotePerSample is how many fresh connections one oneshot_remote sample makes
	// (each: connect, websocket, handshake, initialize, /bin/true); the sample is their
	// median.
	oneshotRemotePerSample      = 20
	oneshotRemotePerSampleQuick = 3

	// idleStreams is how many idle authenticated streams idle_stream_memory holds (issue 7:
	// 1,000; --quick: 100), and idleDialers how many the helper opens at once: well under
	// the mux's 32 handshakes pending validation (relay/mux.MaxPending).
	idleStreams      = 1_000
	idleStreamsQuick = 100
	idleDialers      = 8

	// rendezvousSockets is how many idle websockets rendezvous_idle_memory holds, half
	// executor sockets and half harness sockets with a claimed stream (issue 7: 10,000;
	// --quick: 500).
	rendezvousSockets      = 10_000
	rendezvousSocketsQuick = 500
	// fdHeadroom is how many file descriptors beyond the sockets the bench process keeps
	// for itself when it raises RLIMIT_NOFILE.
	fdHeadroom = 512

	// memorySettle is how long the memory rows wait after the last socket or stream is up
	// before reading the heap, so that in-flight frames (harness claims, acks) have landed.
	memorySettle = 500 * time.Millisecond
	// helperTimeout bounds each phase of a helper process (start-up, dialling, ready).
	helperTimeout = 3 * time.Minute

	// onlinePoll is how often the bench checks whether a remote executor's socket is open
	// on the rendezvous.
	onlinePoll = 20 * time.Millisecond

	// startTimeout bounds an executor's start-up until it prints its ws:// URL.
	startTimeout = 20 * time.Second
	// stopTimeout is how long an executor gets to exit after SIGTERM before SIGKILL.
	stopTimeout = 5 * time.Second
	// recoveryCut is recovery_cut5s's outage; recoveryWait bounds the wait for output after
	// it (the harness's recovery window is 25 s), recoveryRunTimeout the whole ticker run.
	recoveryCut        = 5 * time.Second
	recoveryWait       = 30 * time.Second
	recoveryRunTimeout = 2 * time.Minute
	// callTimeout bounds each JSON-RPC call and each short process run.
	callTimeout = 30 * time.Second
	// streamTimeout bounds one stdout_local sample.
	streamTimeout = 10 * time.Minute

	// stderrTail is how much of an executor's stderr is kept for error messages, in bytes.
	stderrTail = 4 << 10

	// mebibyte converts bytes to MiB, kibibyte to KiB, kilobyte to KB.
	mebibyte = 1 << 20
	gibibyte = 1 << 30
	kibibyte = 1 << 10
	kilobyte = 1000
)

// recoveryTicker is recovery_cut5s's process: a line every 10 ms for at most about a
// minute (it is terminated once the figure is taken).
const recoveryTicker = `i=0; while [ $i -lt 6000 ]; do echo $i; i=$((i+1)); sleep 0.01; done`
