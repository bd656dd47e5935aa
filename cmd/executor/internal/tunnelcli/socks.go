package tunnelcli

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
)

// SOCKS5 (RFC 1928), server side, the subset a local proxy needs: no authentication,
// CONNECT only.
//
//	greeting  client: VER=5 NMETHODS METHODS…        server: VER=5 METHOD (0 = none, 0xff = none acceptable)
//	request   client: VER=5 CMD RSV=0 ATYP ADDR PORT  server: VER=5 REP RSV=0 ATYP=1 0.0.0.0 0
//	ATYP 1 = IPv4 (4 bytes), 3 = domain (1 length byte + name), 4 = IPv6 (16 bytes); PORT big-endian.
const (
	socksVersion        = 5
	socksNoAuth         = 0
	socksNoAcceptable   = 0xff
	socksCmdConnect     = 1
	socksAtypIPv4       = 1
	socksAtypDomain     = 3
	socksAtypIPv6       = 4
	socksRepOK          = 0
	socksRepFailure     = 1
	socksRepNotAllowed  = 2
	socksRepHostUnreach = 4
	socksRepCmdNotSupp  = 7
	socksRepAtypNotSupp = 8
)

var errSocks = errors.New("socks5")

// socksRequest reads the greeting and the request from c and returns the destination.
// On a request it cannot serve it replies with the error and returns an error.
func socksRequest(c io.ReadWriter) (host string, port int, err error) {
	var hdr [2]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return "", 0, fmt.Errorf("%w: reading greeting: %w", errSocks, err)
	}
	if hdr[0] != socksVersion {
		return "", 0, fmt.Errorf("%w: version %d", errSocks, hdr[0])
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(c, methods); err != nil {
		return "", 0, fmt.Errorf("%w: reading methods: %w", errSocks, err)
	}
	ok := false
	for _, m := range methods {
		ok = ok || m == socksNoAuth
	}
	if !ok {
		_, _ = c.Write([]byte{socksVersion, socksNoAcceptable})
		return "", 0, fmt.Errorf("%w: client offers no unauthenticated method", errSocks)
	}
	if _, err := c.Write([]byte{socksVersion, socksNoAuth}); err != nil {
		return "", 0, err
	}
	var req [4]byte
	if _, err := io.ReadFull(c, req[:]); err != nil {
		return "", 0, fmt.Errorf("%w: reading request: %w", errSocks, err)
	}
	if req[0] != socksVersion {
		return "", 0, fmt.Errorf("%w: request version %d", errSocks, req[0])
	}
	switch req[3] {
	case socksAtypIPv4, socksAtypIPv6:
		n := 4
		if req[3] == socksAtypIPv6 {
			n = 16
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(c, b); err != nil {
			return "", 0, fmt.Errorf("%w: reading address: %w", errSocks, err)
		}
		host = net.IP(b).String()
	case socksAtypDomain:
		var l [1]byte
		if _, err := io.ReadFull(c, l[:]); err != nil {
			return "", 0, fmt.Errorf("%w: reading name: %w", errSocks, err)
		}
		b := make([]byte, l[0])
		if _, err := io.ReadFull(c, b); err != nil {
			return "", 0, fmt.Errorf("%w: reading name: %w", errSocks, err)
		}
		host = string(b)
	default:
		_ = socksReply(c, socksRepAtypNotSupp)
		return "", 0, fmt.Errorf("%w: address type %d", errSocks, req[3])
	}
	var p [2]byte
	if _, err := io.ReadFull(c, p[:]); err != nil {
		return "", 0, fmt.Errorf("%w: reading port: %w", errSocks, err)
	}
	if req[1] != socksCmdConnect {
		_ = socksReply(c, socksRepCmdNotSupp)
		return "", 0, fmt.Errorf("%w: command %d not supported (CONNECT only)", errSocks, req[1])
	}
	return host, int(binary.BigEndian.Uint16(p[:])), nil
}

// socksReply sends a reply with a zero bound address.
func socksReply(w io.Writer, rep byte) error {
	_, err := w.Write([]byte{socksVersion, rep, 0, socksAtypIPv4, 0, 0, 0, 0, 0, 0})
	return err
}

func socksDest(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }
