package netproxy

import (
	"bufio"
	"bytes"
	"net"
)

// ReadHeadForTest parses one request head from b, re-emits it in forwarding form and
// finds its target (status is the 400 text when there is none).
func ReadHeadForTest(b []byte) (head, status string, err error) {
	h, err := readHead(bufio.NewReader(bytes.NewReader(b)))
	if err != nil {
		return "", "", err
	}
	var out bytes.Buffer
	writeForwardHead(&out, h)
	_, _, status = requestTarget(h)
	return out.String(), status, nil
}

// ReadSocksAddrForTest parses a SOCKS5 DST.ADDR of type atyp from c.
func ReadSocksAddrForTest(c net.Conn, atyp byte) (string, uint16, byte) {
	return readSocksAddr(c, atyp)
}
