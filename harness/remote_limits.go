package harness

import "time"

// Remote-mode constants (spec/registry-auth.md §5.3, §8.3; spec/jsonrpc.md §2.5).
const (
	// RelayPingInterval and RelayPongTimeout are the harness's keepalive on its relay
	// socket (our choice; the released harness pings every 30 s and waits 60 s for the
	// Pong, spec/relay-noise.md §10). A link that goes silent without a FIN or RST — a
	// stall — is therefore noticed within RelayPingInterval + RelayPongTimeout = 30 s of
	// the last Pong and recovery starts, instead of after up to 90 s. While the harness is
	// not reading (its consumer applies back-pressure) Pongs cannot be seen, so a missed
	// Pong then only re-arms the wait (wsconn.Options.ParkedReaderGrace). Pings are
	// websocket control frames to the rendezvous, which answers any; relay frames are
	// unchanged.
	RelayPingInterval = 10 * time.Second
	RelayPongTimeout  = 20 * time.Second

	// DefaultRecoveryTimeout bounds one session recovery: the reference harness gives up
	// after 25 s.
	DefaultRecoveryTimeout = 25 * time.Second

	// sessionTTLSlack is added to the executor's advertised session TTL (sessionTtlMs) to
	// bound a recovery window: the executor starts the TTL when it notices the broken link,
	// which may be up to the stated liveness bound (≤ 45 s, docs/reliability.md) after the
	// harness noticed, so the session may live that much longer than the TTL measured from
	// the harness's side.
	sessionTTLSlack = 45 * time.Second

	// maxSessionTTLMs is the largest sessionTtlMs taken into account (a year); a larger
	// one (it would overflow a time.Duration) is ignored.
	maxSessionTTLMs = uint64(365 * 24 * time.Hour / time.Millisecond)

	// finalAttemptBudget is how long the attempt that starts at the recovery deadline may
	// take: a connect, a websocket upgrade, the handshake (≤ handshakeTimeout) and the
	// resume.
	finalAttemptBudget = 15 * time.Second

	// recoveryBackoffInitial and recoveryBackoffMax are the delays between failed recovery
	// attempts: 500 ms doubling to 5 s, plus up to +50 % jitter (reference).
	recoveryBackoffInitial = 500 * time.Millisecond
	recoveryBackoffMax     = 5 * time.Second

	// resumeRetryInterval is the wait before re-sending initialize after -32010 (the old
	// stream's session is not detached yet; reference: every 100 ms).
	resumeRetryInterval = 100 * time.Millisecond

	// recoveryRequestTimeout bounds each request a recovery attempt makes itself
	// (initialize with resumeSessionId; catch-up reads have catchUpReadTimeout). Past it
	// the attempt fails and the next one starts, so a request or reply lost by a faulty
	// rendezvous on a stream without ARQ costs one attempt. The reference bounds
	// initialize by 10 s; a resume's reply is one small record that a live executor sends
	// at once, and at 5 % loss per link about one resume in five is lost, so 10 s would
	// spend a 20 s window in two losses (measured on TestFaults/Reference/*/drop).
	recoveryRequestTimeout = 5 * time.Second

	// handshakeTimeout bounds the Noise handshake of one attempt; the reference bounds it by
	// its 10 s JSON-RPC initialize timeout.
	handshakeTimeout = 10 * time.Second

	// CodeConnectionLost is the code of the *RPCError returned for an in-flight request that
	// is not safe to repeat when the connection broke: it may or may not have been applied.
	// It is client-side only; the executor never sends it.
	CodeConnectionLost = -32099
)

// Catch-up from a released executor (docs/reliability.md §5): small reads, each delivered
// before the next, so a stream that breaks mid catch-up keeps what earlier reads brought.
const (
	// catchUpReadBytes is the maxBytes of each catch-up process/read (implementation): an
	// answer of 64 KiB of output is about 2 Noise records on the wire, where the reference's
	// uncapped read of a 1 MiB ring is about 23, so under 5 % record loss per link most
	// answers arrive instead of almost none.
	catchUpReadBytes = 64 << 10

	// maxCatchUpReads bounds the reads of one process in one attempt (implementation):
	// 4,096 × 64 KiB = 256 MiB, past any released executor's retention (1 MiB); a process
	// still producing faster than it is read is left to the live stream.
	maxCatchUpReads = 4096

	// catchUpReadTimeout bounds one catch-up read (implementation): a 64 KiB answer takes
	// milliseconds on loopback and well under a second on any link the harness is useful
	// on, while the last record of an answer lost on a stream without ARQ is noticed by
	// nothing else; it costs this long instead of recoveryRequestTimeout.
	catchUpReadTimeout = 3 * time.Second
)
