package channel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/execlab/executor/noise"
)

// InitiatorConfig configures the harness side. It is never mutated.
type InitiatorConfig struct {
	// Static is the harness identity. Required.
	Static *noise.Identity
	// ResponderStatic is the executor key pinned from the registry bundle. Required.
	ResponderStatic noise.PublicKey
	// Prologue binds the ids (noise.AppendPrologue). Must equal the responder's.
	Prologue []byte
	// Authorization is the harness key authorization sent in message 1; it may be
	// empty. At most noise.MaxMessage1Payload bytes (the executor accepts only
	// MaxAuthorizationLen bytes of UTF-8).
	Authorization []byte
	// Rand supplies ephemeral keys; nil means crypto/rand.
	Rand io.Reader
}

// ResponderConfig configures the executor side. It is never mutated and may be shared
// by concurrent handshakes.
type ResponderConfig struct {
	// Static is the executor identity. Required.
	Static *noise.Identity
	// Prologue binds the ids (noise.AppendPrologue). Must equal the initiator's.
	Prologue []byte
	// Authorize decides whether the authenticated harness key with its authorization
	// may open the stream (the registry validate call). Required. It runs on the
	// Responder goroutine with Responder's ctx, after the authorization passed the
	// MaxAuthorizationLen and UTF-8 checks, and before message 2 is sent. Returning an
	// error wrapping ErrExecutorCredentialsRejected makes Responder send message 2 with
	// RejectedPayload; any error makes Responder fail with *AuthorizeError.
	Authorize func(ctx context.Context, peer noise.PublicKey, authorization []byte) error
	// Rand supplies ephemeral keys; nil means crypto/rand.
	Rand io.Reader
}

// Initiator runs the harness side of the handshake over rc: it sends message 1 with
// cfg.Authorization, waits for message 2 and returns the secure Conn.
//
// Errors: ErrExecutorCredentialsRejected when message 2 carries RejectedPayload;
// ErrResponsePayload for any other non-empty payload; ErrDataBeforeHandshake when a
// record arrives first; errors wrapping noise sentinels (noise.ErrDecrypt for a wrong
// responder key or prologue) otherwise. ctx bounds the whole handshake.
func Initiator(ctx context.Context, rc RecordConn, cfg *InitiatorConfig) (*Conn, error) {
	if cfg == nil || cfg.Static == nil || rc == nil {
		return nil, fmt.Errorf("%w: Static and a RecordConn are required", ErrConfig)
	}
	rs := cfg.ResponderStatic
	hs, err := noise.NewHandshake(&noise.Config{
		Initiator: true, Static: cfg.Static, RemoteStatic: &rs, Prologue: cfg.Prologue, Rand: cfg.Rand,
	})
	if err != nil {
		return nil, fmt.Errorf("starting handshake: %w", err)
	}
	defer hs.Clear()
	msg1, err := hs.WriteMessage(nil, cfg.Authorization)
	if err != nil {
		return nil, fmt.Errorf("writing handshake request: %w", err)
	}
	if err := rc.WritePacket(ctx, Packet{Handshake: true, Payload: msg1}); err != nil {
		return nil, fmt.Errorf("sending handshake request: %w", err)
	}
	p, err := rc.ReadPacket(ctx)
	if err != nil {
		return nil, fmt.Errorf("receiving handshake response: %w", err)
	}
	if !p.Handshake {
		return nil, ErrDataBeforeHandshake
	}
	payload, err := hs.ReadMessage(nil, p.Payload)
	if err != nil {
		return nil, fmt.Errorf("reading handshake response: %w", err)
	}
	switch {
	case bytes.Equal(payload, []byte(RejectedPayload)):
		return nil, ErrExecutorCredentialsRejected
	case len(payload) != 0:
		return nil, ErrResponsePayload
	}
	return newConn(rc, hs, true)
}

// Responder runs the executor side: it reads message 1 from rc, checks the
// authorization (≤ MaxAuthorizationLen bytes, UTF-8), calls cfg.Authorize, and only
// then sends message 2 and returns the secure Conn.
//
// Errors: ErrDataBeforeHandshake when a record arrives first; errors wrapping noise
// sentinels for a malformed or undecryptable message 1 (reason "handshake_request");
// ErrAuthorizationTooLarge / ErrAuthorizationNotUTF8 (Authorize not called);
// *AuthorizeError when Authorize failed. In every case the caller resets the stream.
func Responder(ctx context.Context, rc RecordConn, cfg *ResponderConfig) (*Conn, error) {
	if cfg == nil || cfg.Static == nil || cfg.Authorize == nil || rc == nil {
		return nil, fmt.Errorf("%w: Static, Authorize and a RecordConn are required", ErrConfig)
	}
	p, err := rc.ReadPacket(ctx)
	if err != nil {
		return nil, fmt.Errorf("receiving handshake request: %w", err)
	}
	if !p.Handshake {
		return nil, ErrDataBeforeHandshake
	}
	return RespondTo(ctx, rc, p.Payload, cfg)
}

// RespondTo is Responder for a caller that has already received message 1 (for
// example a relay read loop that must look at the handshake frame before starting the
// stream). msg1 is the handshake payload; rc is used only to send message 2 and for
// the transport afterwards.
func RespondTo(ctx context.Context, rc RecordConn, msg1 []byte, cfg *ResponderConfig) (*Conn, error) {
	if cfg == nil || cfg.Static == nil || cfg.Authorize == nil || rc == nil {
		return nil, fmt.Errorf("%w: Static, Authorize and a RecordConn are required", ErrConfig)
	}
	hs, err := noise.NewHandshake(&noise.Config{Static: cfg.Static, Prologue: cfg.Prologue, Rand: cfg.Rand})
	if err != nil {
		return nil, fmt.Errorf("starting handshake: %w", err)
	}
	defer hs.Clear()
	auth, err := hs.ReadMessage(nil, msg1)
	if err != nil {
		return nil, fmt.Errorf("reading handshake request: %w", err)
	}
	if err := checkAuthorization(auth); err != nil {
		return nil, err
	}
	peer, err := hs.PeerStatic()
	if err != nil {
		return nil, err
	}
	if err := cfg.Authorize(ctx, peer, auth); err != nil {
		aerr := &AuthorizeError{Err: err}
		if errors.Is(err, ErrExecutorCredentialsRejected) {
			aerr.RejectionSent = sendResponse(ctx, rc, hs, []byte(RejectedPayload)) == nil
		}
		return nil, aerr
	}
	if err := sendResponse(ctx, rc, hs, nil); err != nil {
		return nil, err
	}
	return newConn(rc, hs, false)
}

func checkAuthorization(auth []byte) error {
	if len(auth) > MaxAuthorizationLen {
		return ErrAuthorizationTooLarge
	}
	if !utf8.Valid(auth) {
		return ErrAuthorizationNotUTF8
	}
	return nil
}

func sendResponse(ctx context.Context, rc RecordConn, hs *noise.HandshakeState, payload []byte) error {
	msg2, err := hs.WriteMessage(nil, payload)
	if err != nil {
		return fmt.Errorf("writing handshake response: %w", err)
	}
	if err := rc.WritePacket(ctx, Packet{Handshake: true, Payload: msg2}); err != nil {
		return fmt.Errorf("sending handshake response: %w", err)
	}
	return nil
}
