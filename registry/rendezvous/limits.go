package rendezvous

import (
	"time"

	"github.com/execlab/executor/relay/frame"
	"github.com/execlab/executor/relay/mux"
)

// Wire constants (fixed by the reference).
const (
	// MaxMessageSize is the largest websocket message routed, in bytes (spec/relay-noise.md
	// §9); larger messages fail the socket.
	MaxMessageSize = frame.MaxMessageSize

	// ResetReason is the reason of the reset a harness socket's end produces, the only
	// reason released peers send (spec/relay-noise.md §2.1).
	ResetReason = frame.ResetReasonProtocolError
)

// Implementation constants (our choice).
const (
	// QueueFrames bounds each socket's outbound queue, in frames. 64 frames of full records
	// (61508 B) keep a one-stream pipe busy on loopback; beyond that the producer blocks.
	QueueFrames = 64

	// QueueBytes bounds each socket's outbound queue, in bytes: 4 MiB, about 68 full-record
	// frames, so the frame bound normally binds first. A single frame larger than the
	// remaining room is accepted into an empty queue.
	QueueBytes = 4 << 20

	// SlowConsumerTimeout is how long the executor's reader waits for room in one harness
	// socket's queue before closing that harness socket (package doc, overflow policy).
	SlowConsumerTimeout = 5 * time.Second

	// ExecutorURLTTL is the lifetime of an executor's signed rendezvous URL. The executor
	// redials the same URL after network errors; once it has expired the upgrade gets 401 and
	// the executor re-registers (spec/relay-noise.md §11), which mints a fresh one.
	ExecutorURLTTL = 24 * time.Hour

	// HarnessURLTTL is the lifetime of a harness's signed URL: one bundle serves one
	// physical attempt, dialled right after connect. It is also how long a used harness
	// URL's nonce is remembered (single use), so it bounds that memory's age.
	HarnessURLTTL = 2 * time.Minute

	// MaxClockSkew is how much later than now plus its role's lifetime (ExecutorURLTTL,
	// HarnessURLTTL) a URL's expiry may be and still verify: the clock difference allowed
	// between the node that signed it and the node that verifies it. A later expiry was
	// not minted by a registry (it never signs for longer) and is refused
	// (ErrLifetimeExceeded), so a leaked key cannot mint a URL that outlives a rotation.
	MaxClockSkew = 30 * time.Second

	// PingInterval and PongTimeout are the rendezvous's own keepalive on every socket
	// (websocket Ping; the released peers answer any Ping, spec/relay-noise.md §10, and
	// keep their own 30 s / 60 s schedule towards us). A link that goes silent without a
	// FIN or RST — a stall — is therefore dropped within PingInterval + PongTimeout = 30 s
	// of its last Pong, well under the 45 s the harness may wait, so the harness is closed
	// (or the executor's streams reset) and recovery starts. A socket whose reader is
	// parked by back-pressure (it cannot see Pongs while it waits for queue room) is not
	// counted as silent: the wait is re-armed (wsconn.Conn.ReaderWasParked).
	PingInterval = 10 * time.Second
	PongTimeout  = 20 * time.Second

	// BasePath is the URL path prefix the Hub serves.
	BasePath = "/rendezvous/v1/"
)

// Admission limits (our choice; security issue 13). Each one bounds what a single holder
// of a harness token can take from an environment that others share.
const (
	// MaxHarnessSockets bounds the open harness sockets per environment. The executor
	// serves at most mux.MaxStreams active plus mux.MaxPending validating streams per
	// physical socket (spec/relay-noise.md §9) and refuses the rest, so sockets beyond that
	// sum could never carry a stream; refusing them at the upgrade (HTTP 429) keeps idle
	// sockets from piling up on the rendezvous.
	MaxHarnessSockets = mux.MaxStreams + mux.MaxPending

	// MaxHarnessSocketsPerSubject bounds the open harness sockets one harness token (the
	// signed URL's subject) may hold in one environment: half the environment's bound, so
	// one token can never take every slot and another token always finds room.
	MaxHarnessSocketsPerSubject = MaxHarnessSockets / 2

	// HarnessHandshakeTimeout is how long a harness socket may stay open without the
	// executor having answered its handshake (message 2); then the rendezvous closes it.
	// The executor's validation takes at most 10 s (spec/registry-auth.md §4.2) and the
	// released harness sends its handshake at once (spec/relay-noise.md §4.1), so a
	// socket still unanswered after three times that is idle or abandoned.
	HarnessHandshakeTimeout = 30 * time.Second

	// HarnessFailureBudget is how many failed harness streams one subject may cause in one
	// environment before its harness upgrades (and connects) are refused with 429. A
	// failed stream is one the executor reset before it carried any executor data — each
	// such reset may have been charged to the executor's per-socket budget of
	// mux.FailureBudget (8) failures that pauses every handshake for mux.Cooldown
	// (spec/relay-noise.md §12.2) — or a harness socket closed for breaking the frame order
	// of spec/relay-noise.md §4.1. Fewer than half the executor's budget, so one token
	// alone cannot pause the executor for everyone in one burst.
	HarnessFailureBudget = mux.FailureBudget/2 - 1

	// HarnessFailureForgiveness is how long it takes for one failure to be forgiven: a
	// paused subject gets one new attempt per interval. The executor's failure counter
	// never decays on its own (it restarts only after a cooldown), so this is what spaces
	// out one abuser's charges: after its first HarnessFailureBudget failures it needs
	// (mux.FailureBudget - HarnessFailureBudget) more intervals, 10 minutes, to pause the
	// executor once. A legitimate harness caught in a cooldown someone else caused retries
	// at most a few times (spec/registry-auth.md §5.3) and is forgiven within minutes.
	HarnessFailureForgiveness = 2 * time.Minute

	// MaxConcurrentUpgrades bounds the rendezvous upgrades being checked and accepted at
	// once (signature, registration lookup, websocket handshake); more get HTTP 503 at once
	// rather than queue behind a slow store. An upgrade takes milliseconds, so 64 in flight
	// is far above any legitimate burst (one executor reconnect plus a harness connect per
	// recovery attempt).
	MaxConcurrentUpgrades = 64

	// MalformedWarnInterval is the least time between two warnings about malformed frames
	// (undecodable, invalid or text messages); the frames in between are counted and the
	// next warning reports how many were suppressed, so a garbage-sending peer cannot flood
	// the log.
	MalformedWarnInterval = 10 * time.Second
)
