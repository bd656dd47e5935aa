package channel_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/execlab/executor/noise"
	"github.com/execlab/executor/noise/channel"
)

type authCall struct {
	peer noise.PublicKey
	auth []byte
}

// goPair runs channel.Initiator and channel.Responder against each other.
type goPair struct {
	initID, respID *noise.Identity
	iEnd, rEnd     *pipeEnd
	iConn, rConn   *channel.Conn
	iErr, rErr     error
	calls          []authCall
}

func runPair(t *testing.T, icfg channel.InitiatorConfig, rcfg channel.ResponderConfig) *goPair {
	t.Helper()
	ctx := testCtx(t)
	p := &goPair{initID: icfg.Static, respID: rcfg.Static}
	if p.initID == nil {
		p.initID = mustIdentity(t)
		icfg.Static = p.initID
	}
	if p.respID == nil {
		p.respID = mustIdentity(t)
		rcfg.Static = p.respID
	}
	if icfg.ResponderStatic == (noise.PublicKey{}) {
		icfg.ResponderStatic = p.respID.Public()
	}
	inner := rcfg.Authorize
	if inner == nil {
		inner = allowAll
	}
	callsCh := make(chan authCall, 1)
	rcfg.Authorize = func(ctx context.Context, peer noise.PublicKey, auth []byte) error {
		callsCh <- authCall{peer, bytes.Clone(auth)}
		return inner(ctx, peer, auth)
	}
	p.iEnd, p.rEnd = newPipe(256)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.rConn, p.rErr = channel.Responder(ctx, p.rEnd, &rcfg)
		if p.rErr != nil {
			p.rEnd.Close() // as the relay would: reset the stream
		}
	}()
	p.iConn, p.iErr = channel.Initiator(ctx, p.iEnd, &icfg)
	<-done
	close(callsCh)
	for c := range callsCh {
		p.calls = append(p.calls, c)
	}
	t.Cleanup(func() {
		for _, c := range []*channel.Conn{p.iConn, p.rConn} {
			if c != nil {
				c.Close()
			}
		}
	})
	return p
}

func TestHandshake_GoGo(t *testing.T) {
	for _, n := range []int{0, 15, 52, 4096} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			auth := []byte(strings.Repeat("a", n))
			p := runPair(t, channel.InitiatorConfig{Prologue: testPrologue, Authorization: auth},
				channel.ResponderConfig{Prologue: testPrologue})
			if p.iErr != nil || p.rErr != nil {
				t.Fatalf("handshake: initiator %v, responder %v", p.iErr, p.rErr)
			}
			if len(p.calls) != 1 || !bytes.Equal(p.calls[0].auth, auth) || p.calls[0].peer != p.initID.Public() {
				t.Fatalf("Authorize calls = %d, want 1 with the initiator key and authorization", len(p.calls))
			}
			iw, rw := p.iEnd.Written(), p.rEnd.Written()
			if len(iw) != 1 || !iw[0].Handshake || len(iw[0].Payload) != 3568+n {
				t.Fatalf("initiator wrote %d packets, first %d bytes; want 1 handshake of %d", len(iw), len(iw[0].Payload), 3568+n)
			}
			if len(rw) != 1 || !rw[0].Handshake || len(rw[0].Payload) != 3424 {
				t.Fatalf("responder wrote %d packets; want 1 handshake of 3424 bytes", len(rw))
			}
			if p.iConn.PeerStatic() != p.respID.Public() || p.rConn.PeerStatic() != p.initID.Public() {
				t.Fatal("peer keys not authenticated")
			}
			if p.iConn.HandshakeHash() != p.rConn.HandshakeHash() {
				t.Fatal("handshake hashes differ")
			}
			ctx := testCtx(t)
			for _, dir := range []struct{ w, r *channel.Conn }{{p.iConn, p.rConn}, {p.rConn, p.iConn}} {
				if err := dir.w.WriteMessage(ctx, []byte(`{"id":1}`)); err != nil {
					t.Fatal(err)
				}
				got, err := dir.r.ReadMessage(ctx)
				if err != nil || string(got) != `{"id":1}` {
					t.Fatalf("got %q, %v; want {\"id\":1}", got, err)
				}
			}
		})
	}
}

func TestResponder_AuthorizationBounds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		auth      []byte
		want      error
		wantCalls int
	}{
		{"empty", nil, nil, 1},
		{"4096", bytes.Repeat([]byte("x"), 4096), nil, 1},
		{"4096-multibyte", []byte(strings.Repeat("é", 2048)), nil, 1},
		{"4097", bytes.Repeat([]byte("x"), 4097), channel.ErrAuthorizationTooLarge, 0},
		{"not-utf8", []byte{'a', 0xff, 'b'}, channel.ErrAuthorizationNotUTF8, 0},
		{"truncated-utf8", []byte("é")[:1], channel.ErrAuthorizationNotUTF8, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := runPair(t, channel.InitiatorConfig{Prologue: testPrologue, Authorization: tc.auth},
				channel.ResponderConfig{Prologue: testPrologue})
			if !errors.Is(p.rErr, tc.want) {
				t.Fatalf("responder: got %v, want %v", p.rErr, tc.want)
			}
			if len(p.calls) != tc.wantCalls {
				t.Fatalf("Authorize calls = %d, want %d", len(p.calls), tc.wantCalls)
			}
			if tc.want != nil {
				if p.iErr == nil {
					t.Fatal("initiator succeeded though the responder failed")
				}
				if n := len(p.rEnd.Written()); n != 0 {
					t.Fatalf("responder wrote %d packets, want none", n)
				}
			}
		})
	}
}

func TestResponder_AuthorizeOutcomes(t *testing.T) {
	errDenied := errors.New("registry said valid=false")
	for _, tc := range []struct {
		name          string
		authorize     error
		wantRejection bool
		wantInit      error
	}{
		{"401", fmt.Errorf("validate: status 401: %w", channel.ErrExecutorCredentialsRejected), true, channel.ErrExecutorCredentialsRejected},
		{"denied", errDenied, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := runPair(t, channel.InitiatorConfig{Prologue: testPrologue, Authorization: []byte("authz")},
				channel.ResponderConfig{Prologue: testPrologue, Authorize: func(context.Context, noise.PublicKey, []byte) error { return tc.authorize }})
			var aerr *channel.AuthorizeError
			if !errors.As(p.rErr, &aerr) || !errors.Is(p.rErr, tc.authorize) {
				t.Fatalf("responder: got %v, want *AuthorizeError wrapping %v", p.rErr, tc.authorize)
			}
			if aerr.RejectionSent != tc.wantRejection {
				t.Fatalf("RejectionSent = %v, want %v", aerr.RejectionSent, tc.wantRejection)
			}
			rw := p.rEnd.Written()
			if tc.wantRejection {
				if len(rw) != 1 || len(rw[0].Payload) != 3424+len(channel.RejectedPayload) {
					t.Fatalf("responder wrote %d packets, want one msg2 of %d bytes", len(rw), 3424+len(channel.RejectedPayload))
				}
				if !errors.Is(p.iErr, channel.ErrExecutorCredentialsRejected) {
					t.Fatalf("initiator: got %v, want ErrExecutorCredentialsRejected", p.iErr)
				}
			} else {
				if len(rw) != 0 {
					t.Fatalf("responder wrote %d packets, want none before a reset", len(rw))
				}
				if p.iErr == nil {
					t.Fatal("initiator succeeded without message 2")
				}
			}
		})
	}
}

func TestHandshake_RejectsWrongResponderKey(t *testing.T) {
	var called atomic.Bool
	p := runPair(t, channel.InitiatorConfig{Prologue: testPrologue, ResponderStatic: mustIdentity(t).Public()},
		channel.ResponderConfig{Prologue: testPrologue, Authorize: func(context.Context, noise.PublicKey, []byte) error { called.Store(true); return nil }})
	if !errors.Is(p.rErr, noise.ErrDecrypt) {
		t.Fatalf("responder: got %v, want noise.ErrDecrypt", p.rErr)
	}
	if called.Load() || len(p.calls) != 0 {
		t.Fatal("Authorize called for an undecryptable message 1")
	}
	if p.iErr == nil {
		t.Fatal("initiator succeeded")
	}
}

func TestHandshake_RejectsMismatchedPrologue(t *testing.T) {
	p := runPair(t, channel.InitiatorConfig{Prologue: testPrologue},
		channel.ResponderConfig{Prologue: noise.AppendPrologue(nil, "env-1", "registration-1", "stream-2")})
	if !errors.Is(p.rErr, noise.ErrDecrypt) {
		t.Fatalf("responder: got %v, want noise.ErrDecrypt", p.rErr)
	}
	if len(p.calls) != 0 {
		t.Fatal("Authorize called")
	}
}

func TestHandshake_DataBeforeHandshake(t *testing.T) {
	ctx := testCtx(t)
	// Responder: a record first.
	a, b := newPipe(4)
	a.WritePacket(ctx, channel.Packet{Seq: 0, Payload: []byte{1, 2, 3}})
	if _, err := channel.Responder(ctx, b, &channel.ResponderConfig{Static: mustIdentity(t), Authorize: allowAll}); !errors.Is(err, channel.ErrDataBeforeHandshake) {
		t.Fatalf("responder: got %v, want ErrDataBeforeHandshake", err)
	}
	// Initiator: a record instead of message 2.
	a, b = newPipe(4)
	b.WritePacket(ctx, channel.Packet{Seq: 0, Payload: []byte{1, 2, 3}})
	resp := mustIdentity(t)
	if _, err := channel.Initiator(ctx, a, &channel.InitiatorConfig{Static: mustIdentity(t), ResponderStatic: resp.Public()}); !errors.Is(err, channel.ErrDataBeforeHandshake) {
		t.Fatalf("initiator: got %v, want ErrDataBeforeHandshake", err)
	}
}

func TestInitiator_RejectsResponsePayload(t *testing.T) {
	ctx := testCtx(t)
	respID := mustIdentity(t)
	a, b := newPipe(4)
	go func() {
		p, err := b.ReadPacket(ctx)
		if err != nil {
			return
		}
		hs, _ := noise.NewHandshake(&noise.Config{Static: respID})
		if _, err := hs.ReadMessage(nil, p.Payload); err != nil {
			return
		}
		msg2, _ := hs.WriteMessage(nil, []byte("surprise"))
		b.WritePacket(ctx, channel.Packet{Handshake: true, Payload: msg2})
	}()
	_, err := channel.Initiator(ctx, a, &channel.InitiatorConfig{Static: mustIdentity(t), ResponderStatic: respID.Public()})
	if !errors.Is(err, channel.ErrResponsePayload) || err.Error() != "handshake response payload must be empty" {
		t.Fatalf("got %v, want ErrResponsePayload", err)
	}
}

func TestHandshake_TamperedMessagesFail(t *testing.T) {
	// Flip one byte in each region of both messages in flight; the receiving side must
	// fail. (Every byte is flipped in the noise package tests.)
	for _, tc := range []struct {
		name   string
		msg    int // 1 or 2
		offset int
	}{
		{"msg1-skem", 1, 10}, {"msg1-e", 1, 1100}, {"msg1-s", 1, 2400}, {"msg1-payload", 1, 3560},
		{"msg2-ekem", 2, 10}, {"msg2-skem", 2, 1100}, {"msg2-e", 2, 2200}, {"msg2-e-mlkem", 2, 3000}, {"msg2-tag", 2, 3420},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			respID, initID := mustIdentity(t), mustIdentity(t)
			a, b := newPipe(4)
			tamper := &tamperConn{RecordConn: b, flipWrite: tc.msg == 2, flipRead: tc.msg == 1, offset: tc.offset}
			res := make(chan error, 1)
			go func() {
				c, err := channel.Responder(ctx, tamper, &channel.ResponderConfig{Static: respID, Authorize: allowAll})
				if c != nil {
					c.Close()
				}
				if err != nil {
					b.Close()
				}
				res <- err
			}()
			ic, ierr := channel.Initiator(ctx, a, &channel.InitiatorConfig{Static: initID, ResponderStatic: respID.Public(), Authorization: []byte("authorization")})
			rerr := <-res
			if ic != nil {
				ic.Close()
			}
			failed := map[int]error{1: rerr, 2: ierr}[tc.msg]
			if failed == nil {
				t.Fatalf("tampered message %d accepted", tc.msg)
			}
		})
	}
}

// tamperConn flips one bit of the first handshake packet read or written.
type tamperConn struct {
	channel.RecordConn
	flipRead, flipWrite bool
	offset              int
}

func (c *tamperConn) ReadPacket(ctx context.Context) (channel.Packet, error) {
	p, err := c.RecordConn.ReadPacket(ctx)
	if err == nil && c.flipRead && p.Handshake {
		c.flipRead = false
		p.Payload = bytes.Clone(p.Payload)
		p.Payload[c.offset] ^= 0x04
	}
	return p, err
}

func (c *tamperConn) WritePacket(ctx context.Context, p channel.Packet) error {
	if c.flipWrite && p.Handshake {
		c.flipWrite = false
		p.Payload = bytes.Clone(p.Payload)
		p.Payload[c.offset] ^= 0x04
	}
	return c.RecordConn.WritePacket(ctx, p)
}
