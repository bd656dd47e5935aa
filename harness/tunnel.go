package harness

// Port tunnels (docs/protocol-extensions.md, capability tcpTunnel): DialTCP opens a TCP
// connection from the executor's host and returns it as a net.Conn. The tunnel/*
// notifications are taken on the read loop (tunnelTable.handle), before the notification
// queue, so a tunnel whose reader is slow never holds back other traffic: its data waits
// in its own buffer, which the flow-control window bounds.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/execlab/executor/executor/protocol"
)

// TunnelWindow is the harness's receive window per tunnelled connection, in bytes: the
// executor has at most this much data in flight towards it.
const TunnelWindow = 2 << 20

// ErrTunnelRefused is wrapped by DialTCP's error when the executor's policy
// (--tunnel-allow) does not allow the destination; the error's text is the executor's,
// naming the flag.
var ErrTunnelRefused = errors.New("tunnel refused by the executor")

// ErrTunnelReset is wrapped by reads and writes of a tunnelled connection that the
// executor reset (its destination failed) or that a relay reconnect cut.
var ErrTunnelReset = errors.New("tunnel reset")

// tunnelTable is the Client's open tunnels by connection id.
type tunnelTable struct {
	next         atomic.Uint64
	nextListener atomic.Uint64
	// mu guards conns and listeners. Held briefly, never across a write.
	mu        sync.Mutex
	conns     map[uint64]*TunnelConn
	listeners map[uint64]*TunnelListener // tunnel_listen.go
}

func (t *tunnelTable) add(tc *TunnelConn) { tablePut(t, &t.conns, tc.id, tc) }

func (t *tunnelTable) get(id uint64) *TunnelConn { return tableGet(t, &t.conns, id) }

// tablePut stores v under id in *m (made on first use), one of t's maps, under t.mu.
func tablePut[V any](t *tunnelTable, m *map[uint64]V, id uint64, v V) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if *m == nil {
		*m = make(map[uint64]V)
	}
	(*m)[id] = v
}

// tableGet returns the value under id in *m, one of t's maps, under t.mu.
func tableGet[V any](t *tunnelTable, m *map[uint64]V, id uint64) V {
	t.mu.Lock()
	defer t.mu.Unlock()
	return (*m)[id]
}

func (t *tunnelTable) remove(id uint64) {
	t.mu.Lock()
	delete(t.conns, id)
	t.mu.Unlock()
}

// resetAll resets every tunnel with err (connection lost or replaced). Never blocks.
func (t *tunnelTable) resetAll(err error) {
	t.mu.Lock()
	conns, ls := t.conns, t.listeners
	t.conns, t.listeners = nil, nil
	t.mu.Unlock()
	for _, tc := range conns {
		tc.fail(err)
	}
	for _, l := range ls {
		l.fail(err)
	}
}

// handle takes a tunnel/* notification on the read loop and reports whether it was one;
// params passed jsonwire's scanner with the message (parseMessage). It never blocks. Unknown ids are ignored (a close crossing ours).
func (t *tunnelTable) handle(c *Client, method string, params []byte) bool {
	switch method {
	case protocol.MethodTunnelAccepted:
		t.handleAccepted(c, params)
	case protocol.MethodTunnelData:
		var p struct {
			ConnID uint64          `json:"connId"`
			Data   json.RawMessage `json:"data"`
		}
		id, ok := memberUint(params, "connId")
		raw, ok2 := rawMember(params, "data")
		if !ok || !ok2 {
			if json.Unmarshal(params, &p) != nil {
				return true
			}
			id, raw = p.ConnID, p.Data
		}
		if tc := t.get(id); tc != nil {
			b, _, ok := decodeBase64Fast(raw, false)
			if !ok {
				tc.fail(fmt.Errorf("%w: undecodable tunnel/data", ErrTunnelReset))
				return true
			}
			tc.received(b)
		}
	case protocol.MethodTunnelAck:
		id, ok := memberUint(params, "connId")
		n, ok2 := memberUint(params, "bytes")
		if tc := t.get(id); ok && ok2 && tc != nil {
			tc.acked(n)
		}
	case protocol.MethodTunnelEOF:
		if id, ok := memberUint(params, "connId"); ok {
			if tc := t.get(id); tc != nil {
				tc.peerEOF()
			}
		}
	case protocol.MethodTunnelClose:
		if id, ok := memberUint(params, "connId"); ok {
			if tc := t.get(id); tc != nil {
				reason, _ := memberString(params, "reason")
				t.remove(id)
				if reason == "" {
					tc.peerClosed()
				} else {
					tc.fail(fmt.Errorf("%w by the executor: %s", ErrTunnelReset, reason))
				}
			}
		}
	default:
		return false
	}
	return true
}

// DialTCP opens a TCP connection to host:port from the executor's host, through this
// Client's connection (no port is opened on either side). The executor must advertise
// tcpTunnel (otherwise the error wraps ErrNotSupported and nothing is sent); its
// --tunnel-allow policy decides which destinations are allowed (otherwise the error wraps
// ErrTunnelRefused). ctx bounds the open only.
//
// The connection is flow-controlled end to end: a reader that does not read stops the
// remote socket (the executor stops reading it), and the remote side's slowness blocks
// Write. CloseWrite sends a FIN. It is reset (ErrTunnelReset) when the Client's
// connection breaks, including a relay reconnect. All methods are safe for concurrent
// use, as net.Conn requires.
func (c *Client) DialTCP(ctx context.Context, host string, port int) (*TunnelConn, error) {
	if !c.Capabilities().TCPTunnel {
		return nil, notSupported(protocol.MethodTunnelOpen)
	}
	if port <= 0 || port > 65535 {
		return nil, fmt.Errorf("tunnel: port %d out of range", port)
	}
	tc := newTunnelConn(c, c.tunnels.next.Add(1), net.JoinHostPort(host, strconv.Itoa(port)))
	c.tunnels.add(tc)
	var res protocol.TunnelOpenResult
	err := c.Call(ctx, protocol.MethodTunnelOpen, protocol.TunnelOpenParams{ConnID: tc.id, Host: host, Port: uint16(port), Window: TunnelWindow}, &res)
	if err != nil {
		c.tunnels.remove(tc.id)
		tc.fail(err)
		// Cancelled or lost before the result: the executor may have opened it.
		c.sendTunnel(protocol.MethodTunnelClose, protocol.TunnelCloseParams{ConnID: tc.id, Reason: "abandoned"})
		return nil, fmt.Errorf("opening tunnel to %s: %w", tc.remote, extensionErr(protocol.MethodTunnelOpen, err))
	}
	switch res.Status {
	case protocol.TunnelOpened:
	case protocol.TunnelRefused:
		c.tunnels.remove(tc.id)
		return nil, fmt.Errorf("%w: %s", ErrTunnelRefused, res.Message)
	default:
		c.tunnels.remove(tc.id)
		return nil, fmt.Errorf("opening tunnel to %s: %s: %s", tc.remote, res.Status, res.Message)
	}
	tc.mu.Lock()
	tc.credit += int64(res.Window)
	tc.mu.Unlock()
	signal(tc.writable)
	return tc, nil
}

// sendTunnel writes one tunnel notification; errors are the connection's and are left
// to it.
func (c *Client) sendTunnel(method string, params any) error {
	b, err := appendNotification(nil, method, params)
	if err != nil {
		return err
	}
	return c.write(c.life, b)
}

// TunnelConn is a tunnelled TCP connection (net.Conn with CloseWrite). All methods are
// safe for concurrent use; concurrent Writes are serialised.
type TunnelConn struct {
	c      *Client
	id     uint64
	remote string

	writeMu sync.Mutex // serialises Write and CloseWrite: chunks of one Write stay together

	// mu guards the fields below. Held briefly, never across a write to the Client.
	mu       sync.Mutex
	inbuf    [][]byte
	inBytes  int
	unacked  int
	credit   int64
	gotEOF   bool
	sentEOF  bool
	closed   bool  // Close was called
	err      error // reset cause
	rdl, wdl time.Time

	readable chan struct{} // capacity 1
	writable chan struct{} // capacity 1
}

func newTunnelConn(c *Client, id uint64, remote string) *TunnelConn {
	return &TunnelConn{c: c, id: id, remote: remote, readable: make(chan struct{}, 1), writable: make(chan struct{}, 1)}
}

func (tc *TunnelConn) received(b []byte) {
	tc.mu.Lock()
	if tc.err != nil || tc.closed || tc.gotEOF {
		tc.mu.Unlock()
		return
	}
	if tc.inBytes+len(b) > TunnelWindow {
		tc.mu.Unlock()
		tc.fail(fmt.Errorf("%w: executor exceeded the receive window", ErrTunnelReset))
		return
	}
	tc.inbuf = append(tc.inbuf, b)
	tc.inBytes += len(b)
	tc.mu.Unlock()
	signal(tc.readable)
}

func (tc *TunnelConn) acked(n uint64) {
	tc.mu.Lock()
	tc.credit += int64(min(n, 1<<30))
	tc.mu.Unlock()
	signal(tc.writable)
}

func (tc *TunnelConn) peerEOF() {
	tc.mu.Lock()
	tc.gotEOF = true
	tc.mu.Unlock()
	signal(tc.readable)
}

// peerClosed: the executor ended the connection in order (both directions done). Reads
// drain what is buffered, then EOF.
func (tc *TunnelConn) peerClosed() {
	tc.mu.Lock()
	tc.gotEOF = true
	if tc.err == nil {
		tc.err = fmt.Errorf("%w: connection closed by the executor", ErrTunnelReset)
	}
	tc.mu.Unlock()
	signal(tc.readable)
	signal(tc.writable)
}

func (tc *TunnelConn) fail(err error) {
	tc.mu.Lock()
	if tc.err == nil {
		tc.err = err
	}
	tc.inbuf, tc.inBytes = nil, 0
	tc.mu.Unlock()
	signal(tc.readable)
	signal(tc.writable)
}

// wait waits for ch or the deadline dl; it reports a deadline error.
func wait(ch chan struct{}, dl time.Time) error {
	if dl.IsZero() {
		<-ch
		return nil
	}
	d := time.Until(dl)
	if d <= 0 {
		return os.ErrDeadlineExceeded
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-t.C:
		return os.ErrDeadlineExceeded
	}
}

// Read implements net.Conn. It returns io.EOF after the remote side's FIN.
func (tc *TunnelConn) Read(p []byte) (int, error) {
	tc.mu.Lock()
	for len(tc.inbuf) == 0 {
		switch {
		case tc.closed:
			tc.mu.Unlock()
			return 0, net.ErrClosed
		case tc.gotEOF:
			tc.mu.Unlock()
			return 0, io.EOF
		case tc.err != nil:
			err := tc.err
			tc.mu.Unlock()
			return 0, err
		}
		dl := tc.rdl
		tc.mu.Unlock()
		if err := wait(tc.readable, dl); err != nil {
			return 0, err
		}
		tc.mu.Lock()
	}
	n := 0
	for n < len(p) && len(tc.inbuf) > 0 {
		m := copy(p[n:], tc.inbuf[0])
		n += m
		if m == len(tc.inbuf[0]) {
			tc.inbuf[0] = nil
			tc.inbuf = tc.inbuf[1:]
		} else {
			tc.inbuf[0] = tc.inbuf[0][m:]
		}
	}
	tc.inBytes -= n
	tc.unacked += n
	var ack int
	if tc.unacked >= TunnelWindow/4 || tc.inBytes == 0 {
		ack, tc.unacked = tc.unacked, 0
	}
	more := len(tc.inbuf) > 0
	tc.mu.Unlock()
	if more {
		signal(tc.readable) // another Read may proceed
	}
	if ack > 0 {
		_ = tc.c.sendTunnel(protocol.MethodTunnelAck, &protocol.TunnelAckParams{ConnID: tc.id, Bytes: uint64(ack)})
	}
	return n, nil
}

// Write implements net.Conn: it blocks while the executor's window is full.
func (tc *TunnelConn) Write(p []byte) (int, error) {
	tc.writeMu.Lock()
	defer tc.writeMu.Unlock()
	done := 0
	var msg []byte
	for done < len(p) {
		tc.mu.Lock()
		for tc.credit <= 0 && tc.err == nil && !tc.closed && !tc.sentEOF {
			dl := tc.wdl
			tc.mu.Unlock()
			if err := wait(tc.writable, dl); err != nil {
				return done, err
			}
			tc.mu.Lock()
		}
		switch {
		case tc.closed:
			tc.mu.Unlock()
			return done, net.ErrClosed
		case tc.err != nil:
			err := tc.err
			tc.mu.Unlock()
			return done, err
		case tc.sentEOF:
			tc.mu.Unlock()
			return done, fmt.Errorf("tunnel: write after CloseWrite")
		}
		n := min(len(p)-done, protocol.TunnelMaxChunk, int(min(tc.credit, protocol.TunnelMaxChunk)))
		tc.credit -= int64(n)
		more := tc.credit > 0
		tc.mu.Unlock()
		if more {
			signal(tc.writable)
		}
		msg = append(msg[:0], `{"method":"tunnel/data","params":`...)
		msg = (&protocol.TunnelDataParams{ConnID: tc.id, Data: p[done : done+n]}).AppendJSON(msg)
		msg = append(msg, '}')
		if err := tc.c.write(tc.c.life, msg); err != nil {
			tc.fail(err)
			return done, err
		}
		done += n
	}
	return done, nil
}

// CloseWrite sends a FIN: the remote socket is half-closed once the data written before
// has been delivered. Reading continues.
func (tc *TunnelConn) CloseWrite() error {
	tc.writeMu.Lock()
	defer tc.writeMu.Unlock()
	tc.mu.Lock()
	if tc.closed {
		tc.mu.Unlock()
		return net.ErrClosed
	}
	if tc.sentEOF || tc.err != nil {
		tc.mu.Unlock()
		return nil
	}
	tc.sentEOF = true
	tc.mu.Unlock()
	return tc.c.sendTunnel(protocol.MethodTunnelEOF, &protocol.TunnelEOFParams{ConnID: tc.id})
}

// Close implements net.Conn: the executor closes the remote socket (a reset when data was
// still flowing; after CloseWrite and the remote FIN, the executor first writes what it
// still holds). Pending Reads and Writes return net.ErrClosed.
func (tc *TunnelConn) Close() error {
	tc.mu.Lock()
	if tc.closed {
		tc.mu.Unlock()
		return nil
	}
	tc.closed = true
	// Both FINs exchanged: the executor ends the connection itself once it has written
	// what we sent (its tunnel/close{} then finds no id); a tunnel/close now would
	// discard data it has not yet written.
	orderly := tc.sentEOF && tc.gotEOF && tc.err == nil
	tc.inbuf, tc.inBytes = nil, 0
	tc.mu.Unlock()
	signal(tc.readable)
	signal(tc.writable)
	if tc.c.tunnels.get(tc.id) == tc {
		tc.c.tunnels.remove(tc.id)
		if !orderly {
			_ = tc.c.sendTunnel(protocol.MethodTunnelClose, &protocol.TunnelCloseParams{ConnID: tc.id})
		}
	}
	return nil
}

type tunnelAddr string

func (a tunnelAddr) Network() string { return "tunnel" }
func (a tunnelAddr) String() string  { return string(a) }

// LocalAddr implements net.Conn: "tunnel:<id>".
func (tc *TunnelConn) LocalAddr() net.Addr {
	return tunnelAddr("tunnel:" + strconv.FormatUint(tc.id, 10))
}

// RemoteAddr implements net.Conn: the destination as given to DialTCP.
func (tc *TunnelConn) RemoteAddr() net.Addr { return tunnelAddr(tc.remote) }

// SetDeadline implements net.Conn.
func (tc *TunnelConn) SetDeadline(t time.Time) error {
	_ = tc.SetReadDeadline(t)
	return tc.SetWriteDeadline(t)
}

// SetReadDeadline implements net.Conn; a pending Read sees the new deadline.
func (tc *TunnelConn) SetReadDeadline(t time.Time) error {
	tc.mu.Lock()
	tc.rdl = t
	tc.mu.Unlock()
	signal(tc.readable)
	return nil
}

// SetWriteDeadline implements net.Conn; a Write waiting for window sees the new deadline.
func (tc *TunnelConn) SetWriteDeadline(t time.Time) error {
	tc.mu.Lock()
	tc.wdl = t
	tc.mu.Unlock()
	signal(tc.writable)
	return nil
}

// tunnelPrefix starts every tunnel notification as our executor and this package encode
// them (the envelope's first member is the method).
var tunnelPrefix = []byte(`{"method":"tunnel/`)

// isTunnelNotification reports, without parsing, whether msg is a tunnel notification
// in the canonical encoding: session recovery need not look at it (tunnels never
// survive a reconnect). Other encodings are parsed as usual, with the same outcome.
func isTunnelNotification(msg []byte) bool { return bytes.HasPrefix(msg, tunnelPrefix) }
