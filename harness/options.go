package harness

import (
	"io"
	"log/slog"
)

// Options configure a Client. A nil *Options means all defaults; the struct is never
// mutated by this package.
type Options struct {
	// Logger receives debug-level lifecycle events (readLoop started/stopped, dropped late
	// replies). Nil discards. Payloads, tokens and keys are never logged.
	Logger *slog.Logger

	// OnNotification, when non-nil, receives every notification in arrival order, called
	// synchronously on the Client's read loop; Notifications then returns nil. It must
	// return promptly and must not wait for a Call of the same Client (that Call's response
	// is read by the loop it is blocking). Nil selects the channel.
	OnNotification func(Notification)

	// NotificationBuffer bounds the notifications queued for the Notifications channel, in
	// notifications. Zero means DefaultNotificationBuffer. When full, the read loop blocks
	// (see the package doc, back-pressure).
	NotificationBuffer int

	// NotificationBytes bounds the Notifications queue by the bytes of the queued
	// notifications' params. Zero means DefaultNotificationBytes (8 MiB). Whichever of
	// NotificationBuffer and NotificationBytes is reached first stops the read loop.
	NotificationBytes int

	// DisableOutputAck keeps StartProcess from opting processes into acknowledged output
	// (docs/reliability.md) even when the executor offers it. Default false: processes are
	// lossless across reconnects and flow-controlled whenever the executor supports it.
	DisableOutputAck bool

	// ReadLimit is the largest inbound message DialLocal accepts, in bytes. Zero means
	// DefaultReadLimit; -1 disables the limit. Ignored by Open.
	ReadLimit int64

	// AuthBearerToken, when non-empty, is sent by DialLocal as `authorization: Bearer
	// <token>` on the upgrade: the capability token or signed JWT of a listener started
	// with --ws-auth (the released codex CLI sends environments.toml's auth_bearer_token
	// the same way). Surrounding whitespace is trimmed. Never logged. Ignored by Open.
	AuthBearerToken string
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.NotificationBuffer <= 0 {
		c.NotificationBuffer = DefaultNotificationBuffer
	}
	if c.NotificationBytes <= 0 {
		c.NotificationBytes = DefaultNotificationBytes
	}
	if c.ReadLimit == 0 {
		c.ReadLimit = DefaultReadLimit
	}
	return c
}
