package channel

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/execlab/executor/internal/recbuf"
	"github.com/execlab/executor/noise"
)

// Conn is an established secure channel on one relay stream. It satisfies
// jsonrpc.MessageConn structurally.
//
// ReadMessage and WriteMessage may be called concurrently with each other (each
// serialised by its own lock). Close is safe from any goroutine at any time. After a
// read error every later ReadMessage fails; after a write error every later
// WriteMessage fails (see the package doc).
type Conn struct {
	rc        RecordConn
	initiator bool
	peer      noise.PublicKey
	hash      [noise.HashLen]byte

	// readMu serialises ReadMessage so records are reordered, decrypted and reassembled
	// by one goroutine; it guards every field in this block.
	readMu  sync.Mutex
	rx      *noise.CipherState
	reorder reorderBuffer
	reasm   reassembler
	ready   [][]byte // scratch: records released by reorder
	inbox   [][]byte // decoded messages not yet returned, oldest first
	readErr error    // sticky

	// writeMu serialises WriteMessage so a message's records are consecutive and the
	// seq/nonce pair advance together; it guards every field in this block.
	writeMu  sync.Mutex
	tx       *noise.CipherState
	sendSeq  uint32 // seq of the next record
	writeErr error  // sticky

	// closeMu guards closed and the cancel funcs of in-flight calls, so Close can
	// interrupt them without taking readMu/writeMu (which they hold while blocked).
	closeMu     sync.Mutex
	closed      bool
	cancelRead  context.CancelFunc
	cancelWrite context.CancelFunc
}

// scratchPool holds first-record buffers for WriteMessage; the plaintext is never
// retained past the call (records are encrypted into recbuf buffers).
var scratchPool = sync.Pool{New: func() any { return new([RecordPlaintextLen]byte) }}

// recbuf.Cap must equal MaxRecordLen: every record fits one pooled buffer without growing
// it (relay/mux returns only buffers of that capacity to the pool). Fails to compile if not.
var _ = [1]struct{}{}[recbuf.Cap-MaxRecordLen]

func newConn(rc RecordConn, hs *noise.HandshakeState, initiator bool) (*Conn, error) {
	peer, err := hs.PeerStatic()
	if err != nil {
		return nil, err
	}
	hash := hs.HandshakeHash()
	tx, rx, err := hs.Split()
	if err != nil {
		return nil, fmt.Errorf("splitting handshake: %w", err)
	}
	return &Conn{rc: rc, initiator: initiator, peer: peer, hash: hash, tx: tx, rx: rx}, nil
}

// PeerStatic returns the peer's authenticated static key.
func (c *Conn) PeerStatic() noise.PublicKey { return c.peer }

// HandshakeHash returns the final handshake transcript hash (channel binding).
func (c *Conn) HandshakeHash() [noise.HashLen]byte { return c.hash }

// ReadMessage returns the next inbound message (one JSON-RPC message, without its
// length prefix). The returned slice belongs to the caller, who may hand it back with
// ReleaseMessage once done (msgpool.go). It blocks until a message
// is complete, ctx is done, or the Conn fails or is closed. A ctx error leaves the Conn
// usable; any other error is sticky.
//
// Handshake packets after completion are ignored on the responder (the relay answers a
// duplicate handshake with a reset and keeps the stream, spec §12.1) and are an error
// on the initiator (spec §13).
func (c *Conn) ReadMessage(ctx context.Context) ([]byte, error) {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	if c.readErr != nil {
		return nil, c.readErr
	}
	if msg, ok := c.popLocked(); ok {
		return msg, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if !c.track(&c.cancelRead, cancel) {
		return nil, ErrClosed
	}
	defer c.track(&c.cancelRead, nil)
	for {
		p, err := c.rc.ReadPacket(ctx)
		if err != nil {
			if c.isClosed() {
				return nil, ErrClosed
			}
			if ctx.Err() != nil {
				return nil, ctx.Err() // caller's ctx: nothing consumed, stay usable
			}
			return nil, c.failReadLocked(fmt.Errorf("reading record: %w", err))
		}
		if err := c.handlePacketLocked(p); err != nil {
			return nil, c.failReadLocked(err)
		}
		if msg, ok := c.popLocked(); ok {
			return msg, nil
		}
	}
}

func (c *Conn) handlePacketLocked(p Packet) error {
	if p.Handshake {
		if c.initiator {
			return ErrUnexpectedHandshake
		}
		return nil
	}
	if len(p.Payload) > MaxRecordLen {
		return ErrRecordTooLarge
	}
	var err error
	c.ready, err = c.reorder.push(c.ready[:0], p.Seq, p.Payload)
	if err != nil {
		return err
	}
	for i, ct := range c.ready {
		c.ready[i] = nil
		var kept bool
		if dst, ok := c.reasm.spanRoom(len(ct) - noise.TagLen); ok {
			// The whole record continues a message spanning records: decrypt it straight
			// onto the message's end, with no copy afterwards (issue 16).
			pt, err := c.rx.Decrypt(dst, nil, ct)
			if err != nil {
				return fmt.Errorf("decrypting record: %w", err)
			}
			c.inbox = c.reasm.spanFilled(c.inbox, pt)
		} else {
			// In place: the channel owns ct (RecordConn contract), and a fresh plaintext
			// buffer per record was a large share of a receiving harness's allocations
			// (issue 16, docs/bench.md). On failure ct is garbage, but the stream is failed.
			pt, err := c.rx.Decrypt(ct[:0], nil, ct)
			if err != nil {
				return fmt.Errorf("decrypting record: %w", err)
			}
			if c.inbox, kept, err = c.reasm.feed(c.inbox, pt); err != nil {
				return err
			}
		}
		// The record just read, copied into a message and referred to by nothing now,
		// goes back to a RecordConn that pools its storage (issue 16). Records that
		// waited in the reorder buffer are not released.
		if r, ok := c.rc.(PacketReleaser); ok && !kept && len(p.Payload) > 0 && &ct[0] == &p.Payload[0] {
			r.ReleasePacket(p.Payload)
		}
	}
	return nil
}

func (c *Conn) popLocked() ([]byte, bool) {
	if len(c.inbox) == 0 {
		return nil, false
	}
	msg := c.inbox[0]
	c.inbox[0] = nil
	c.inbox = c.inbox[1:]
	if len(c.inbox) == 0 {
		c.inbox = c.inbox[:0:0] // let the backing array go once drained
	}
	return msg, true
}

func (c *Conn) failReadLocked(err error) error {
	c.readErr = err
	c.rx.Clear()
	c.reorder.reset()
	c.reasm = reassembler{}
	c.inbox = nil
	return err
}

// WriteMessage frames msg (1 … MaxMessageLen bytes), encrypts it into records and
// writes them in order with consecutive seqs. msg is not retained. An invalid length
// fails without side effects; any other error is sticky, since part of the message may
// have been sent and the nonce has advanced. ctx cancellation mid-message is such an
// error.
func (c *Conn) WriteMessage(ctx context.Context, msg []byte) error {
	switch {
	case len(msg) == 0:
		return ErrZeroLengthMessage
	case len(msg) > MaxMessageLen:
		return ErrMessageTooLarge
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.writeErr != nil {
		return c.writeErr
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if !c.track(&c.cancelWrite, cancel) {
		return ErrClosed
	}
	defer c.track(&c.cancelWrite, nil)
	if uint64(c.sendSeq)+uint64(recordCount(len(msg))) > uint64(maxSeq) {
		return c.failWriteLocked(ErrSeqExhausted)
	}
	// The first-record scratch comes from a pool, not the Conn: an idle stream then
	// holds no 60 KiB buffer (issue: ≤ 32 KiB heap per idle stream).
	scratch := scratchPool.Get().(*[RecordPlaintextLen]byte)
	defer func() {
		clear(scratch[:min(LengthPrefixLen+len(msg), RecordPlaintextLen)]) // no plaintext left in the pool
		scratchPool.Put(scratch)
	}()
	err := forEachRecord(scratch, msg, func(pt []byte) error {
		// Sealed into a pooled buffer: the RecordConn owns it from WritePacket on and may
		// return it to recbuf once sent (relay/mux does; others leave it to the GC).
		ct, err := c.tx.Encrypt(recbuf.Get(), nil, pt)
		if err != nil {
			return fmt.Errorf("encrypting record: %w", err)
		}
		if err := c.rc.WritePacket(ctx, Packet{Seq: c.sendSeq, Payload: ct}); err != nil {
			return fmt.Errorf("writing record: %w", err)
		}
		c.sendSeq++
		return nil
	})
	if err != nil {
		if c.isClosed() {
			err = ErrClosed
		}
		return c.failWriteLocked(err)
	}
	return nil
}

func (c *Conn) failWriteLocked(err error) error {
	c.writeErr = err
	c.tx.Clear()
	return err
}

// Close ends the channel: it interrupts in-flight ReadMessage/WriteMessage calls (which
// then return ErrClosed), closes the RecordConn if it implements io.Closer, waits for
// the in-flight calls to return and zeroes both directions' keys. It returns the
// RecordConn's Close error, if any. Calling Close again returns nil.
func (c *Conn) Close() error {
	c.closeMu.Lock()
	if c.closed {
		c.closeMu.Unlock()
		return nil
	}
	c.closed = true
	for _, cancel := range []context.CancelFunc{c.cancelRead, c.cancelWrite} {
		if cancel != nil {
			cancel()
		}
	}
	c.closeMu.Unlock()

	var err error
	if cl, ok := c.rc.(io.Closer); ok {
		err = cl.Close()
	}
	c.readMu.Lock()
	if c.readErr == nil {
		c.readErr = ErrClosed
	}
	c.rx.Clear()
	c.reorder.reset()
	c.inbox = nil
	c.readMu.Unlock()

	c.writeMu.Lock()
	if c.writeErr == nil {
		c.writeErr = ErrClosed
	}
	c.tx.Clear()
	c.writeMu.Unlock()
	return err
}

// track installs (or, with nil, removes) the cancel func of an in-flight call. It
// reports false if the Conn is already closed.
func (c *Conn) track(slot *context.CancelFunc, cancel context.CancelFunc) bool {
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	if c.closed && cancel != nil {
		return false
	}
	*slot = cancel
	return true
}

func (c *Conn) isClosed() bool {
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	return c.closed
}
