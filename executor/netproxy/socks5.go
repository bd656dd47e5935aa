package netproxy

// The SOCKS5 listener (RFC 1928; spec/network-proxy.md §3, §5.3): no authentication,
// CONNECT only.
//
//	client greeting   +----+----------+----------+
//	                  |VER | NMETHODS | METHODS  |   VER = 5; we pick 0x00 (no auth) or
//	                  +----+----------+----------+   answer 0xFF and close
//	request           +----+-----+-------+------+----------+----------+
//	                  |VER | CMD |  RSV  | ATYP | DST.ADDR | DST.PORT |
//	                  +----+-----+-------+------+----------+----------+
//	                  ATYP 1 = IPv4 (4 bytes), 3 = name (1 length byte + name), 4 = IPv6
//	reply             VER REP RSV ATYP BND.ADDR BND.PORT (we send IPv4 0.0.0.0:0 on
//	                  failure, the upstream socket's local address on success)
//
// Replies: 0 success; 2 connection not allowed by ruleset (every policy block); 1
// general failure; 4 host unreachable (resolution failed); 5 connection refused; 7
// command not supported (BIND, and UDP ASSOCIATE, which is not implemented); 8 address
// type not supported.

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"syscall"
	"time"
)

const (
	socksVersion      = 5
	socksNoAuth       = 0x00
	socksNoAcceptable = 0xFF
	socksCmdConnect   = 1
	socksAtypIPv4     = 1
	socksAtypName     = 3
	socksAtypIPv6     = 4
)

// SOCKS5 reply codes (RFC 1928 §6).
const (
	socksSucceeded        = 0
	socksGeneralFailure   = 1
	socksNotAllowed       = 2
	socksHostUnreachable  = 4
	socksConnRefused      = 5
	socksCmdNotSupported  = 7
	socksAtypNotSupported = 8
)

// serveSOCKS5 serves one client connection of the SOCKS5 listener.
func (p *Proxy) serveSOCKS5(c net.Conn) {
	_ = c.SetDeadline(time.Now().Add(headTimeout))
	var hdr [2]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil || hdr[0] != socksVersion {
		return
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(c, methods); err != nil {
		return
	}
	if !containsByte(methods, socksNoAuth) {
		_, _ = c.Write([]byte{socksVersion, socksNoAcceptable})
		return
	}
	if _, err := c.Write([]byte{socksVersion, socksNoAuth}); err != nil {
		return
	}
	var req [4]byte
	if _, err := io.ReadFull(c, req[:]); err != nil || req[0] != socksVersion {
		return
	}
	host, port, rep := readSocksAddr(c, req[3])
	if rep != socksSucceeded {
		socksReply(c, rep, nil)
		return
	}
	if req[1] != socksCmdConnect {
		socksReply(c, socksCmdNotSupported, nil)
		return
	}
	r := Request{Protocol: ProtocolSOCKS5TCP, Host: host, Port: port}
	_ = c.SetDeadline(time.Time{}) // the decider may take policyDecisionTimeoutMs + 5 s
	d := p.decide(&r, c)
	_ = c.SetDeadline(time.Now().Add(headTimeout))
	if !d.Allowed {
		socksReply(c, socksNotAllowed, nil)
		return
	}
	up, err := p.dialAudited(r, c, p.dialSOCKS)
	if err != nil {
		socksReply(c, socksFailure(err), nil)
		return
	}
	if !socksReply(c, socksSucceeded, up.LocalAddr()) {
		up.Close()
		return
	}
	_ = c.SetDeadline(time.Time{})
	p.splice(c, up, c, true)
}

// readSocksAddr reads DST.ADDR and DST.PORT of address type atyp.
func readSocksAddr(c net.Conn, atyp byte) (host string, port uint16, rep byte) {
	var addr []byte
	switch atyp {
	case socksAtypIPv4:
		addr = make([]byte, 4)
	case socksAtypIPv6:
		addr = make([]byte, 16)
	case socksAtypName:
		var n [1]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return "", 0, socksGeneralFailure
		}
		addr = make([]byte, n[0])
	default:
		return "", 0, socksAtypNotSupported
	}
	if _, err := io.ReadFull(c, addr); err != nil {
		return "", 0, socksGeneralFailure
	}
	var pb [2]byte
	if _, err := io.ReadFull(c, pb[:]); err != nil {
		return "", 0, socksGeneralFailure
	}
	port = binary.BigEndian.Uint16(pb[:])
	if atyp == socksAtypName {
		return string(addr), port, socksSucceeded
	}
	a, _ := netip.AddrFromSlice(addr)
	return a.Unmap().String(), port, socksSucceeded
}

// socksReply writes a reply with BND.ADDR from bound (0.0.0.0:0 when nil).
func socksReply(c net.Conn, rep byte, bound net.Addr) bool {
	b := []byte{socksVersion, rep, 0, socksAtypIPv4, 0, 0, 0, 0, 0, 0}
	if ta, ok := bound.(*net.TCPAddr); ok {
		if ap := ta.AddrPort(); ap.Addr().Unmap().Is4() {
			ip := ap.Addr().Unmap().As4()
			copy(b[4:8], ip[:])
			binary.BigEndian.PutUint16(b[8:], ap.Port())
		}
	}
	_, err := c.Write(b)
	return err == nil
}

// socksFailure maps an upstream connect error to a reply code.
func socksFailure(err error) byte {
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, errLocalResolution), errors.Is(err, errUpstreamBlocked):
		return socksNotAllowed
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, errTCPUpstream), errors.Is(err, errResolution):
		return socksConnRefused
	case errors.As(err, &dnsErr):
		return socksHostUnreachable
	}
	return socksGeneralFailure
}

func containsByte(b []byte, x byte) bool {
	for _, c := range b {
		if c == x {
			return true
		}
	}
	return false
}
