package transparent

import (
	"net/netip"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// FuzzAnswerDNS: any datagram gets no reply, a FORMERR/SERVFAIL header, or an answer
// that dnsmessage parses with the query's ID and question and at most one record of
// the asked type.
func FuzzAnswerDNS(f *testing.F) {
	f.Add(query(f, "example.invalid.", dnsmessage.TypeA))
	f.Add(query(f, "a.b.c.", dnsmessage.TypeAAAA))
	f.Add(query(f, "x.", dnsmessage.TypeTXT))
	f.Add([]byte{0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1})
	f.Fuzz(func(t *testing.T, q []byte) {
		tab := newFakeTable()
		out := answerDNS(nil, q, tab)
		if len(q) < dnsHeaderLen {
			if len(out) != 0 {
				t.Fatalf("reply to a %d-byte datagram", len(q))
			}
			return
		}
		var m dnsmessage.Message
		if err := m.Unpack(out); err != nil {
			t.Fatalf("reply does not parse: %v (%x)", err, out)
		}
		if m.ID != uint16(q[0])<<8|uint16(q[1]) || !m.Response {
			t.Fatalf("reply header %+v", m.Header)
		}
		if m.RCode != dnsmessage.RCodeSuccess {
			if len(m.Questions)+len(m.Answers) != 0 {
				t.Fatalf("error reply with records")
			}
			return
		}
		if len(m.Questions) != 1 || len(m.Answers) > 1 {
			t.Fatalf("reply has %d questions, %d answers", len(m.Questions), len(m.Answers))
		}
		for _, a := range m.Answers {
			if a.Header.Type != m.Questions[0].Type {
				t.Fatalf("answer type %v for question %v", a.Header.Type, m.Questions[0].Type)
			}
		}
	})
}

// FuzzTranslate: any packet is dropped or comes out as a TCP packet with valid
// checksums, addressed to the listener (from the virtual peer) or to the command.
func FuzzTranslate(f *testing.F) {
	f.Add(tcpPacket(ap("192.0.2.1:40000"), ap("198.18.0.1:80"), tcpFlagSYN, ""), false)
	f.Add(tcpPacket(ap("[2001:db8::1]:40000"), ap("[fdc0:de00::1]:80"), tcpFlagSYN, "x"), false)
	f.Add(tcpPacket(ap("192.0.2.1:5000"), ap("192.0.2.2:10000"), tcpFlagSYN|tcpFlagACK, ""), true)
	f.Add([]byte{0x45, 0, 0, 20}, false)
	f.Fuzz(func(t *testing.T, b []byte, primed bool) {
		n := newNAT(5000, 6000)
		now := time.Unix(1000, 0)
		if primed { // one session, so replies to the listener's port find it
			n.translate(tcpPacket(ap("192.0.2.1:40000"), ap("198.18.0.1:80"), tcpFlagSYN, ""), now)
			n.translate(tcpPacket(ap("[2001:db8::1]:40000"), ap("[fdc0:de00::1]:80"), tcpFlagSYN, ""), now)
		}
		out := n.translate(b, now)
		if out == nil {
			return
		}
		checkSums(t, out)
		p, _ := parsePacket(out)
		toListener := p.dst == netip.AddrPortFrom(Local4, 5000) || p.dst == netip.AddrPortFrom(Local6, 6000)
		toCommand := p.dst.Addr() == Local4 || p.dst.Addr() == Local6
		if !toListener && !toCommand {
			t.Fatalf("translated to %v", p.dst)
		}
		if toListener && p.src.Addr() != peer4 && p.src.Addr() != peer6 {
			t.Fatalf("to the listener from %v", p.src)
		}
	})
}
