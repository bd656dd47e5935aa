package transparent

import (
	"bytes"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestAppendSocksRequest(t *testing.T) {
	greeting := []byte{5, 1, 0}
	check := func(tg target, req ...byte) {
		t.Helper()
		got, err := appendSocksRequest(nil, tg)
		if want := append(greeting, req...); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%+v: got %v %v, want %v", tg, got, err, want)
		}
	}
	check(target{name: "a.test", port: 80}, 5, 1, 0, 3, 6, 'a', '.', 't', 'e', 's', 't', 0, 80)
	check(target{addr: netip.MustParseAddr("10.1.2.3"), port: 81}, 5, 1, 0, 1, 10, 1, 2, 3, 0, 81)
	check(target{addr: netip.MustParseAddr("::ffff:10.1.2.3"), port: 81}, 5, 1, 0, 1, 10, 1, 2, 3, 0, 81)
	check(target{addr: netip.MustParseAddr("2001:db8::5"), port: 443},
		5, 1, 0, 4, 0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 1, 0xbb)
	if _, err := appendSocksRequest(nil, target{name: strings.Repeat("a", 256), port: 1}); err == nil {
		t.Error("a 256-byte name was accepted")
	}
}

func TestReadSocksReplies(t *testing.T) {
	for name, tc := range map[string]struct {
		in      []byte
		refused bool
		ok      bool
	}{
		"granted ipv4":   {[]byte{5, 0, 5, 0, 0, 1, 127, 0, 0, 1, 0, 80}, false, true},
		"granted ipv6":   {append(append([]byte{5, 0, 5, 0, 0, 4}, make([]byte, 16)...), 0, 80), false, true},
		"granted name":   {[]byte{5, 0, 5, 0, 0, 3, 1, 'x', 0, 80}, false, true},
		"policy refusal": {[]byte{5, 0, 5, 2, 0, 1, 0, 0, 0, 0, 0, 0}, true, false},
		"auth required":  {[]byte{5, 0xff}, false, false},
		"bad version":    {[]byte{5, 0, 4, 0, 0, 1, 0, 0, 0, 0, 0, 0}, false, false},
		"bad atyp":       {[]byte{5, 0, 5, 0, 0, 9}, false, false},
		"truncated":      {[]byte{5, 0, 5, 0, 0, 1, 127}, false, false},
		"empty":          {nil, false, false},
	} {
		err := readSocksReplies(bytes.NewReader(tc.in))
		if (err == nil) != tc.ok || errors.Is(err, errSocksRefused) != tc.refused {
			t.Errorf("%s: got %v", name, err)
		}
	}
}
