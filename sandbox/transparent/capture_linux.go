package transparent

// The unprivileged half: the routines that read the tun device, answer the resolver's
// queries, and carry each captured connection to the SOCKS5 policy.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// DialFunc opens a byte stream to the executor's SOCKS5 proxy (the managed-network
// bridge's socket).
type DialFunc func(ctx context.Context) (net.Conn, error)

// Capture is a running transparent TCP capture. Its routines: one reading the tun
// device, one serving the resolver, one accept routine per listener and one per
// captured connection (plus one copy routine while it is spliced); Close stops and
// waits for all of them.
type Capture struct {
	// ctx is the capture's lifetime, cancelled by Close: it bounds SOCKS5 dials and
	// closes every captured connection (context.AfterFunc in routineConn).
	ctx       context.Context
	cancel    context.CancelFunc
	dial      DialFunc
	tun       *os.File
	dns       net.PacketConn
	lns       []net.Listener
	nat       *nat
	names     *fakeTable
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// Start takes ownership of the descriptors Setup prepared (tunFD, dnsFD) and starts
// capturing. Nothing is captured before it returns; on error both are closed.
func Start(tunFD, dnsFD int, dial DialFunc) (*Capture, error) {
	unix.CloseOnExec(tunFD)
	unix.CloseOnExec(dnsFD)
	if err := unix.SetNonblock(tunFD, true); err != nil {
		unix.Close(tunFD)
		unix.Close(dnsFD)
		return nil, fmt.Errorf("tun device: %w", err)
	}
	tun := os.NewFile(uintptr(tunFD), "/dev/net/tun")
	dnsFile := os.NewFile(uintptr(dnsFD), "resolver")
	dns, err := net.FilePacketConn(dnsFile)
	dnsFile.Close()
	if err != nil {
		tun.Close()
		return nil, fmt.Errorf("resolver socket: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Capture{ctx: ctx, cancel: cancel, dial: dial, tun: tun, dns: dns, names: newFakeTable()}
	var ports [2]uint16
	for i, a := range []netip.Addr{Local4, Local6} {
		ln, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(netip.AddrPortFrom(a, 0)))
		if err != nil {
			if a.Is6() { // a kernel without IPv6: Setup added no IPv6 route either
				continue
			}
			c.Close()
			return nil, fmt.Errorf("listening for captured connections: %w", err)
		}
		ports[i] = uint16(ln.Addr().(*net.TCPAddr).Port)
		c.lns = append(c.lns, ln)
	}
	c.nat = newNAT(ports[0], ports[1])
	c.wg.Add(2 + len(c.lns))
	go c.routineTun()
	go c.routineResolver()
	for _, ln := range c.lns {
		go c.routineAccept(ln)
	}
	return c, nil
}

// Close stops capturing, closes every captured connection, and waits for the
// routines. Idempotent.
func (c *Capture) Close() {
	c.closeOnce.Do(func() {
		c.cancel()
		c.tun.Close()
		c.dns.Close()
		for _, ln := range c.lns {
			ln.Close()
		}
	})
	c.wg.Wait()
}

// routineTun reads packets from the device, translates them and writes them back.
func (c *Capture) routineTun() {
	defer c.wg.Done()
	buf := make([]byte, MTU+64)
	for {
		n, err := c.tun.Read(buf)
		if err != nil {
			return
		}
		if out := c.nat.translate(buf[:n], time.Now()); out != nil {
			if _, err := c.tun.Write(out); err != nil && errors.Is(err, os.ErrClosed) {
				return
			}
		}
	}
}

// routineResolver answers each query with the fake table's addresses.
func (c *Capture) routineResolver() {
	defer c.wg.Done()
	buf := make([]byte, maxDNSMessage)
	out := make([]byte, 0, maxDNSMessage+32)
	for {
		n, from, err := c.dns.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if reply := answerDNS(out[:0], buf[:n], c.names); len(reply) > 0 {
			c.dns.WriteTo(reply, from)
		}
	}
}

// routineAccept takes the captured connections of one listener.
func (c *Capture) routineAccept(ln net.Listener) {
	defer c.wg.Done()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if c.ctx.Err() != nil { // Close has begun: nothing new starts
			conn.Close()
			return
		}
		c.wg.Add(1) // safe against Close's Wait: this routine is still counted
		go c.routineConn(conn.(*net.TCPConn))
	}
}

// routineConn asks the SOCKS5 policy for the connection's original destination and
// splices it, or resets it when the policy (or anything on the way) refuses.
func (c *Capture) routineConn(conn *net.TCPConn) {
	defer c.wg.Done()
	defer context.AfterFunc(c.ctx, func() { conn.Close() })()
	peer := conn.RemoteAddr().(*net.TCPAddr).AddrPort()
	defer c.nat.release(peer.Port(), time.Now())
	up, err := c.connect(peer)
	if err != nil {
		var one [1]byte
		conn.SetReadDeadline(time.Now().Add(refuseGrace))
		conn.Read(one[:]) // the command's first bytes, or the grace ends (refuseGrace)
		conn.SetLinger(0) // a reset, as the reference answers a refused destination
		conn.Close()
		return
	}
	defer context.AfterFunc(c.ctx, func() { up.Close() })()
	done := make(chan struct{})
	go func() { // copy routine, waited for below
		io.Copy(up, conn)
		closeWrite(up)
		close(done)
	}()
	io.Copy(conn, up)
	conn.CloseWrite()
	<-done
	conn.Close()
	up.Close()
}

// connect resolves peer (the virtual peer's address of an accepted connection) to
// its original destination and opens it through the SOCKS5 proxy.
func (c *Capture) connect(peer netip.AddrPort) (net.Conn, error) {
	if p := peer.Addr().Unmap(); p != peer4 && p != peer6 {
		return nil, errors.New("transparent: connection from outside the NAT")
	}
	dst, ok := c.nat.lookup(peer.Port())
	if !ok {
		return nil, errors.New("transparent: no NAT session")
	}
	t := target{addr: dst.Addr().Unmap(), port: dst.Port()}
	if isFake(t.addr) {
		if t.name, ok = c.names.name(t.addr); !ok {
			return nil, errors.New("transparent: fake address never handed out")
		}
	}
	ctx, cancel := context.WithTimeout(c.ctx, dialTimeout)
	defer cancel()
	up, err := c.dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("dialing SOCKS5 proxy: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { up.SetDeadline(time.Unix(1, 0)) })
	err = socksConnect(up, t)
	if !stop() || err != nil {
		up.Close()
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	return up, nil
}

// closeWrite half-closes conn when it can.
func closeWrite(conn net.Conn) {
	if cw, ok := conn.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	} else {
		conn.Close()
	}
}
