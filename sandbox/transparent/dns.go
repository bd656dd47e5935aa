package transparent

// The in-namespace resolver's codec (RFC 1035 §4.1): one question in, one answer out.
//
//	header   ID(2) FLAGS(2) QDCOUNT(2) ANCOUNT(2) NSCOUNT(2) ARCOUNT(2)
//	question QNAME (labels, no compression in a query) QTYPE(2) QCLASS(2)
//	answer   NAME = C0 0C (pointer to the question) TYPE(2) CLASS(2) TTL(4) RDLENGTH(2) RDATA
//
// An A question gets the name's fake IPv4 address, AAAA its fake IPv6 address, any
// other type of class IN an empty NOERROR answer; a query that is not a standard
// query with exactly one question, or whose name does not parse, gets FORMERR when
// its header could be read and nothing otherwise. Additional records (EDNS0 OPT) are
// ignored and not echoed.

import (
	"encoding/binary"
	"errors"
	"net/netip"
)

// DNS wire constants.
const (
	dnsHeaderLen = 12 // bytes, RFC 1035 §4.1.1
	// Question types and class: A and IN (RFC 1035 §3.2.2–3.2.4), AAAA (RFC 3596 §2.1).
	dnsTypeA, dnsTypeAAAA, dnsClassIN = 1, 28, 1
	// FLAGS bits (RFC 1035 §4.1.1): response, recursion desired and available, opcode.
	dnsFlagQR, dnsFlagRD, dnsFlagRA, dnsOpcodeMask = 1 << 15, 1 << 8, 1 << 7, 0xf << 11
	// RCODEs: format error, server failure (RFC 1035 §4.1.1).
	dnsRcodeForm, dnsRcodeFail = 1, 2
	// Name limits, bytes (RFC 1035 §2.3.4): a whole name in text, one label.
	dnsMaxName, dnsMaxLabel = 255, 63
)

// errDNSQuery is any query the resolver cannot parse.
var errDNSQuery = errors.New("transparent: malformed DNS query")

// dnsQuestion is a parsed query: its name (dotted, no trailing dot, as sent) and the
// raw question section to echo.
type dnsQuestion struct {
	id       uint16
	flags    uint16
	name     string
	qtype    uint16
	qclass   uint16
	question []byte // QNAME QTYPE QCLASS, aliasing the query
}

// parseDNSQuery parses q. A nil error means exactly one well-formed question.
func parseDNSQuery(q []byte) (dnsQuestion, error) {
	var d dnsQuestion
	if len(q) < dnsHeaderLen {
		return d, errDNSQuery
	}
	d.id = binary.BigEndian.Uint16(q[0:])
	d.flags = binary.BigEndian.Uint16(q[2:])
	if d.flags&dnsFlagQR != 0 || d.flags&dnsOpcodeMask != 0 || binary.BigEndian.Uint16(q[4:]) != 1 {
		return d, errDNSQuery
	}
	i := dnsHeaderLen
	var nb [dnsMaxName + 1 + dnsMaxLabel]byte // on the stack: one allocation, the string
	name := nb[:0]
	for {
		if i >= len(q) {
			return d, errDNSQuery
		}
		l := int(q[i])
		i++
		if l == 0 {
			break
		}
		if l > dnsMaxLabel || i+l > len(q) {
			return d, errDNSQuery
		}
		if len(name) > 0 {
			name = append(name, '.')
		}
		for _, c := range q[i : i+l] {
			if c == '.' || c <= ' ' || c >= 0x7f {
				return d, errDNSQuery
			}
		}
		name = append(name, q[i:i+l]...)
		if len(name) > dnsMaxName {
			return d, errDNSQuery
		}
		i += l
	}
	if i+4 > len(q) || len(name) == 0 {
		return d, errDNSQuery
	}
	d.name = string(name)
	d.qtype = binary.BigEndian.Uint16(q[i:])
	d.qclass = binary.BigEndian.Uint16(q[i+2:])
	d.question = q[dnsHeaderLen : i+4]
	return d, nil
}

// appendDNSError appends an answer with rcode and no question to out, for a query
// whose header was readable (len(q) ≥ 12); otherwise it returns out unchanged.
func appendDNSError(out, q []byte, rcode uint16) []byte {
	if len(q) < dnsHeaderLen {
		return out
	}
	flags := binary.BigEndian.Uint16(q[2:])
	out = binary.BigEndian.AppendUint16(out, binary.BigEndian.Uint16(q[0:]))
	out = binary.BigEndian.AppendUint16(out, dnsFlagQR|flags&(dnsOpcodeMask|dnsFlagRD)|dnsFlagRA|rcode)
	return append(out, 0, 0, 0, 0, 0, 0, 0, 0)
}

// appendDNSAnswer appends d's answer to out: addr when it is valid (A or AAAA), else
// no answer record.
func appendDNSAnswer(out []byte, d *dnsQuestion, addr netip.Addr) []byte {
	an := uint16(0)
	if addr.IsValid() {
		an = 1
	}
	out = binary.BigEndian.AppendUint16(out, d.id)
	out = binary.BigEndian.AppendUint16(out, dnsFlagQR|d.flags&dnsFlagRD|dnsFlagRA)
	out = binary.BigEndian.AppendUint16(out, 1)
	out = binary.BigEndian.AppendUint16(out, an)
	out = append(out, 0, 0, 0, 0)
	out = append(out, d.question...)
	if an == 0 {
		return out
	}
	rdata := addr.AsSlice()
	out = append(out, 0xc0, dnsHeaderLen)
	out = binary.BigEndian.AppendUint16(out, d.qtype)
	out = binary.BigEndian.AppendUint16(out, dnsClassIN)
	out = binary.BigEndian.AppendUint32(out, ttl)
	out = binary.BigEndian.AppendUint16(out, uint16(len(rdata)))
	return append(out, rdata...)
}

// answerDNS appends the reply to query q to out (nothing when q is unreadable),
// assigning fake addresses from t.
func answerDNS(out, q []byte, t *fakeTable) []byte {
	d, err := parseDNSQuery(q)
	if err != nil {
		return appendDNSError(out, q, dnsRcodeForm)
	}
	var addr netip.Addr
	if d.qclass == dnsClassIN && (d.qtype == dnsTypeA || d.qtype == dnsTypeAAAA) {
		v4, v6, ok := t.lookup(d.name)
		if !ok {
			return appendDNSError(out, q, dnsRcodeFail)
		}
		addr = v4
		if d.qtype == dnsTypeAAAA {
			addr = v6
		}
	}
	return appendDNSAnswer(out, &d, addr)
}
