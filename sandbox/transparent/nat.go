package transparent

// The NAT that turns a TCP connection the command opens to any address into one the
// kernel delivers to the capture's own listener, so that the kernel's TCP stack does
// all of TCP and this code only rewrites addresses (no userspace TCP):
//
//	command 192.0.2.1:s ──► D:d            (read from the tun device; D is any
//	                                         non-local address, fake or real)
//	     rewritten to  2001:db8::2 / 192.0.2.2:n ──► 192.0.2.1:L   (written back:
//	                                         delivered to the listener on L)
//	listener 192.0.2.1:L ──► 192.0.2.2:n   (read: the peer is routed via the tun)
//	     rewritten to  D:d ──► 192.0.2.1:s (written back: delivered to the command)
//
// n is the session's own virtual port: the listener's accepted connection has remote
// address peer:n, and lookup(n) gives back D:d. Only TCP over IPv4 (no options
// assumed) and IPv6 (no extension headers) is rewritten; everything else read from
// the device is dropped. Checksums are recomputed in full.
//
//	IPv4: 0 ver/ihl · 2 total length · 9 protocol · 10 header checksum · 12 src · 16 dst
//	IPv6: 0 ver · 4 payload length · 6 next header · 8 src(16) · 24 dst(16)
//	TCP:  0 src port · 2 dst port · 13 flags · 16 checksum

import (
	"encoding/binary"
	"net/netip"
	"sync"
	"time"
)

const (
	protoTCP   = 6
	tcpFlagFIN = 0x01
	tcpFlagSYN = 0x02
	tcpFlagRST = 0x04
	tcpFlagACK = 0x10
	ipv4MinHdr = 20
	ipv6Hdr    = 40
	tcpMinHdr  = 20
)

// flow is a captured connection as the command sees it.
type flow struct {
	src, dst netip.AddrPort
}

// session is one NAT entry.
type session struct {
	flow    flow
	port    uint16    // the virtual peer's port
	expires time.Time // zero while the connection is live
}

// nat is the session table. Safe for concurrent use.
type nat struct {
	listen4, listen6 uint16 // the listeners' ports on Local4/Local6

	mu     sync.Mutex // guards byFlow, byPort, next
	byFlow map[flow]*session
	byPort map[uint16]*session
	next   uint16
}

func newNAT(listen4, listen6 uint16) *nat {
	return &nat{listen4: listen4, listen6: listen6, byFlow: map[flow]*session{},
		byPort: map[uint16]*session{}, next: natPortFirst}
}

// packet is a parsed IP/TCP packet aliasing its buffer.
type packet struct {
	b        []byte
	v6       bool
	ipHdr    int // IP header length
	src, dst netip.AddrPort
	flags    byte
}

// parsePacket accepts an IPv4 or IPv6 TCP packet whose lengths are consistent.
func parsePacket(b []byte) (packet, bool) {
	p := packet{b: b}
	if len(b) < 1 {
		return p, false
	}
	switch b[0] >> 4 {
	case 4:
		if len(b) < ipv4MinHdr {
			return p, false
		}
		p.ipHdr = int(b[0]&0xf) * 4
		total := int(binary.BigEndian.Uint16(b[2:]))
		if p.ipHdr < ipv4MinHdr || total < p.ipHdr+tcpMinHdr || total > len(b) || b[9] != protoTCP ||
			binary.BigEndian.Uint16(b[6:])&0x3fff != 0 { // fragments are not rewritten
			return p, false
		}
		p.b = b[:total]
		p.src = netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[12:16])), binary.BigEndian.Uint16(b[p.ipHdr:]))
		p.dst = netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[16:20])), binary.BigEndian.Uint16(b[p.ipHdr+2:]))
	case 6:
		if len(b) < ipv6Hdr+tcpMinHdr || b[6] != protoTCP {
			return p, false
		}
		p.v6, p.ipHdr = true, ipv6Hdr
		total := ipv6Hdr + int(binary.BigEndian.Uint16(b[4:]))
		if total < ipv6Hdr+tcpMinHdr || total > len(b) {
			return p, false
		}
		p.b = b[:total]
		p.src = netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])), binary.BigEndian.Uint16(b[p.ipHdr:]))
		p.dst = netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[24:40])), binary.BigEndian.Uint16(b[p.ipHdr+2:]))
	default:
		return p, false
	}
	p.flags = p.b[p.ipHdr+13]
	return p, true
}

// rewrite sets p's addresses and ports and recomputes its checksums.
func (p *packet) rewrite(src, dst netip.AddrPort) {
	b := p.b
	if p.v6 {
		s, d := src.Addr().As16(), dst.Addr().As16()
		copy(b[8:24], s[:])
		copy(b[24:40], d[:])
	} else {
		s, d := src.Addr().As4(), dst.Addr().As4()
		copy(b[12:16], s[:])
		copy(b[16:20], d[:])
		b[10], b[11] = 0, 0
		binary.BigEndian.PutUint16(b[10:], ^fold(sum(0, b[:p.ipHdr])))
	}
	t := b[p.ipHdr:]
	binary.BigEndian.PutUint16(t[0:], src.Port())
	binary.BigEndian.PutUint16(t[2:], dst.Port())
	t[16], t[17] = 0, 0
	var ps uint32
	if p.v6 {
		ps = sum(sum(0, b[8:24]), b[24:40]) + uint32(len(t)) + protoTCP
	} else {
		ps = sum(sum(0, b[12:16]), b[16:20]) + uint32(len(t)) + protoTCP
	}
	binary.BigEndian.PutUint16(t[16:], ^fold(sum(ps, t)))
}

// sum adds b as big-endian 16-bit words (RFC 1071) to s.
func sum(s uint32, b []byte) uint32 {
	for len(b) >= 2 {
		s += uint32(b[0])<<8 | uint32(b[1])
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint32(b[0]) << 8
	}
	return s
}

func fold(s uint32) uint16 {
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return uint16(s)
}

// translate rewrites the packet in b for writing back to the device and returns the
// bytes to write, or nil to drop it. now drives session expiry.
func (n *nat) translate(b []byte, now time.Time) []byte {
	p, ok := parsePacket(b)
	if !ok {
		return nil
	}
	local, peer, listen := Local4, peer4, n.listen4
	if p.v6 {
		local, peer, listen = Local6, peer6, n.listen6
	}
	if p.src.Addr() != local || listen == 0 {
		return nil
	}
	if p.src.Port() == listen && p.dst.Addr() == peer { // the listener's reply
		n.mu.Lock()
		s := n.byPort[p.dst.Port()]
		n.mu.Unlock()
		if s == nil {
			return nil
		}
		p.rewrite(s.flow.dst, s.flow.src)
		return p.b
	}
	if p.dst.Addr() == local || p.dst.Addr() == peer { // never loop the listener to itself
		return nil
	}
	f := flow{src: p.src, dst: p.dst}
	n.mu.Lock()
	s := n.byFlow[f]
	if s == nil {
		if p.flags&(tcpFlagSYN|tcpFlagACK|tcpFlagRST) != tcpFlagSYN {
			n.mu.Unlock()
			return nil
		}
		if s = n.addLocked(f, now); s == nil {
			n.mu.Unlock()
			return nil
		}
	}
	port := s.port
	n.mu.Unlock()
	p.rewrite(netip.AddrPortFrom(peer, port), netip.AddrPortFrom(local, listen))
	return p.b
}

// addLocked starts a session for f (a SYN), expiring stale ones first; nil when the
// table is full. The session expires unless the listener accepts it (live).
func (n *nat) addLocked(f flow, now time.Time) *session {
	if len(n.byPort) >= maxSessions {
		n.expireLocked(now)
		if len(n.byPort) >= maxSessions {
			return nil
		}
	}
	for range natPortLast - natPortFirst + 1 {
		port := n.next
		n.next++
		if n.next > natPortLast {
			n.next = natPortFirst
		}
		if n.byPort[port] == nil {
			s := &session{flow: f, port: port, expires: now.Add(sessionLinger)}
			n.byFlow[f] = s
			n.byPort[port] = s
			return s
		}
	}
	return nil
}

func (n *nat) expireLocked(now time.Time) {
	for port, s := range n.byPort {
		if !s.expires.IsZero() && now.After(s.expires) {
			delete(n.byPort, port)
			delete(n.byFlow, s.flow)
		}
	}
}

// lookup returns the original destination of the session whose virtual port is
// port, marking it live; ok is false when there is none.
func (n *nat) lookup(port uint16) (netip.AddrPort, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.byPort[port]
	if s == nil {
		return netip.AddrPort{}, false
	}
	s.expires = time.Time{}
	return s.flow.dst, true
}

// release starts the linger of port's session once its connection has ended.
func (n *nat) release(port uint16, now time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if s := n.byPort[port]; s != nil {
		s.expires = now.Add(sessionLinger)
	}
}
