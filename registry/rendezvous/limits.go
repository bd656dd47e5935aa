package rendezvous

import (
	"time"

	"github.com/execlab/executor/relay/frame"
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
	// physical attempt, dialled right after connect.
	HarnessURLTTL = 2 * time.Minute

	// BasePath is the URL path prefix the Hub serves.
	BasePath = "/rendezvous/v1/"
)
