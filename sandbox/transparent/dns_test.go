package transparent

import (
	"bytes"
	"net/netip"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// query builds a DNS query with dnsmessage, the independent reference for the codec.
func query(t testing.TB, name string, typ dnsmessage.Type) []byte {
	t.Helper()
	m := dnsmessage.Message{Header: dnsmessage.Header{ID: 0x1234, RecursionDesired: true},
		Questions: []dnsmessage.Question{{Name: dnsmessage.MustNewName(name), Type: typ, Class: dnsmessage.ClassINET}}}
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAnswerDNS(t *testing.T) {
	tab := newFakeTable()
	for _, tc := range []struct {
		name string
		typ  dnsmessage.Type
		want string // "" = no answer record
	}{
		{"example.invalid.", dnsmessage.TypeA, "198.18.0.1"},
		{"example.invalid.", dnsmessage.TypeAAAA, "fdc0:de00::1"},
		{"Other.Test.", dnsmessage.TypeAAAA, "fdc0:de00::2"},
		{"other.test.", dnsmessage.TypeA, "198.18.0.2"},
		{"example.invalid.", dnsmessage.TypeMX, ""},
		{"example.invalid.", dnsmessage.TypeHTTPS, ""},
	} {
		q := query(t, tc.name, tc.typ)
		var m dnsmessage.Message
		if err := m.Unpack(answerDNS(nil, q, tab)); err != nil {
			t.Fatalf("%s %v: unpacking answer: %v", tc.name, tc.typ, err)
		}
		if m.ID != 0x1234 || !m.Response || !m.RecursionDesired || !m.RecursionAvailable || m.RCode != dnsmessage.RCodeSuccess ||
			len(m.Questions) != 1 || m.Questions[0].Name.String() != tc.name || m.Questions[0].Type != tc.typ {
			t.Errorf("%s %v: header or question: %+v %+v", tc.name, tc.typ, m.Header, m.Questions)
		}
		var got string
		if len(m.Answers) > 1 {
			t.Errorf("%s %v: %d answers", tc.name, tc.typ, len(m.Answers))
		}
		for _, a := range m.Answers {
			if a.Header.Name.String() != tc.name || a.Header.TTL != ttl {
				t.Errorf("%s %v: answer header %+v", tc.name, tc.typ, a.Header)
			}
			switch r := a.Body.(type) {
			case *dnsmessage.AResource:
				got = netip.AddrFrom4(r.A).String()
			case *dnsmessage.AAAAResource:
				got = netip.AddrFrom16(r.AAAA).String()
			}
		}
		if got != tc.want {
			t.Errorf("%s %v: got %q, want %q", tc.name, tc.typ, got, tc.want)
		}
	}
}

func TestAnswerDNS_Malformed(t *testing.T) {
	tab := newFakeTable()
	good := query(t, "a.test.", dnsmessage.TypeA)
	formerr := func(q []byte) []byte {
		return []byte{q[0], q[1], 0x81, 0x81, 0, 0, 0, 0, 0, 0, 0, 0} // QR RD RA, FORMERR
	}
	response := append([]byte(nil), good...)
	response[2] |= 0x80
	twoQ := append([]byte(nil), good...)
	twoQ[5] = 2
	badLabel := append([]byte(nil), good...)
	badLabel[12] = 64 // label longer than 63
	compressed := append(append([]byte(nil), good[:12]...), 0xc0, 12, 0, 1, 0, 1)
	dotted := append(append([]byte(nil), good[:12]...), 3, 'a', '.', 'b', 0, 0, 1, 0, 1)
	for name, tc := range map[string]struct{ q, want []byte }{
		"short header":    {good[:11], nil},
		"response bit":    {response, formerr(response)},
		"two questions":   {twoQ, formerr(twoQ)},
		"truncated":       {good[:len(good)-1], formerr(good)},
		"label too long":  {badLabel, formerr(badLabel)},
		"compressed name": {compressed, formerr(compressed)},
		"dot in label":    {dotted, formerr(dotted)},
		"root name":       {append(append([]byte(nil), good[:12]...), 0, 0, 1, 0, 1), formerr(good)},
	} {
		if got := answerDNS(nil, tc.q, tab); !bytes.Equal(got, tc.want) {
			t.Errorf("%s: got %x, want %x", name, got, tc.want)
		}
	}
	if len(tab.names) != 0 {
		t.Errorf("malformed queries assigned names: %q", tab.names)
	}
}

func TestAnswerDNS_Allocs(t *testing.T) {
	tab := newFakeTable()
	q := query(t, "example.invalid.", dnsmessage.TypeA)
	out := make([]byte, 0, maxDNSMessage)
	answerDNS(out, q, tab)
	// One allocation remains: the name string the parser builds for the table lookup.
	if n := testing.AllocsPerRun(100, func() { answerDNS(out[:0], q, tab) }); n > 1 {
		t.Errorf("answerDNS allocates %v times per query, want ≤ 1", n)
	}
}
