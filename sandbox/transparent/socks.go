package transparent

// The SOCKS5 client side of a captured connection (RFC 1928, no authentication,
// CONNECT only), spoken to the executor's SOCKS5 policy through the managed-network
// bridge:
//
//	→ 05 01 00                          greeting: one method, "no authentication"
//	← 05 00
//	→ 05 01 00 ATYP DST.ADDR DST.PORT   ATYP 03: len(1) name; 01: IPv4(4); 04: IPv6(16)
//	← 05 REP 00 ATYP BND.ADDR BND.PORT  REP 00 = granted; anything else refuses

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
)

// SOCKS5 wire constants (RFC 1928).
const (
	socksVersion = 5 // VER, §3 and §4
	socksNoAuth  = 0 // METHOD "no authentication required", §3
	socksCmdConn = 1 // CMD CONNECT, §4
	// ATYP values, §4: IPv4 address, domain name, IPv6 address.
	socksAtypIPv4, socksAtypName, socksAtypIPv6 = 1, 3, 4
	socksMaxName                                = 255 // bytes: a domain name's one-byte length, §5
	socksReplyOK                                = 0   // REP "succeeded", §6
	socksReplyHead                              = 4   // bytes: VER REP RSV ATYP, §6
)

// errSocksRefused is a reply other than "succeeded": the policy refused the
// destination (reply 2) or the proxy could not reach it.
var errSocksRefused = errors.New("transparent: SOCKS5 proxy refused the connection")

// target is a captured connection's destination: a name (from the fake table) or an
// address, and a port.
type target struct {
	name string
	addr netip.Addr
	port uint16
}

// appendSocksRequest appends the greeting and the CONNECT request for t to out.
func appendSocksRequest(out []byte, t target) ([]byte, error) {
	out = append(out, socksVersion, 1, socksNoAuth, socksVersion, socksCmdConn, 0)
	switch {
	case t.name != "":
		if len(t.name) > socksMaxName {
			return nil, fmt.Errorf("transparent: name of %d bytes is too long for SOCKS5", len(t.name))
		}
		out = append(out, socksAtypName, byte(len(t.name)))
		out = append(out, t.name...)
	case t.addr.Unmap().Is4():
		a := t.addr.Unmap().As4()
		out = append(append(out, socksAtypIPv4), a[:]...)
	default:
		a := t.addr.As16()
		out = append(append(out, socksAtypIPv6), a[:]...)
	}
	return binary.BigEndian.AppendUint16(out, t.port), nil
}

// socksConnect sends the request for t on rw and reads both replies.
func socksConnect(rw io.ReadWriter, t target) error {
	req, err := appendSocksRequest(make([]byte, 0, 16+socksMaxName), t)
	if err != nil {
		return err
	}
	if _, err := rw.Write(req); err != nil {
		return fmt.Errorf("writing SOCKS5 request: %w", err)
	}
	return readSocksReplies(rw)
}

// readSocksReplies reads the method selection and the CONNECT reply.
func readSocksReplies(r io.Reader) error {
	var buf [socksMaxName + 6]byte
	if _, err := io.ReadFull(r, buf[:2]); err != nil {
		return fmt.Errorf("reading SOCKS5 method: %w", err)
	}
	if buf[0] != socksVersion || buf[1] != socksNoAuth {
		return fmt.Errorf("transparent: SOCKS5 method %d refused", buf[1])
	}
	if _, err := io.ReadFull(r, buf[:socksReplyHead]); err != nil {
		return fmt.Errorf("reading SOCKS5 reply: %w", err)
	}
	if buf[0] != socksVersion {
		return errors.New("transparent: SOCKS5 reply has a bad version")
	}
	if buf[1] != socksReplyOK {
		return errSocksRefused
	}
	var n int
	switch buf[3] {
	case socksAtypIPv4:
		n = 4
	case socksAtypIPv6:
		n = 16
	case socksAtypName:
		if _, err := io.ReadFull(r, buf[:1]); err != nil {
			return fmt.Errorf("reading SOCKS5 reply: %w", err)
		}
		n = int(buf[0])
	default:
		return errors.New("transparent: SOCKS5 reply has a bad address type")
	}
	if _, err := io.ReadFull(r, buf[:n+2]); err != nil {
		return fmt.Errorf("reading SOCKS5 reply: %w", err)
	}
	return nil
}
