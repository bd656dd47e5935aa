package transparent

import (
	"net/netip"
	"testing"
)

func TestFakeTable(t *testing.T) {
	tab := newFakeTable()
	for i, tc := range []struct{ name, v4, v6 string }{
		{"example.invalid", "198.18.0.1", "fdc0:de00::1"},
		{"LocalHost.", "198.18.0.2", "fdc0:de00::2"},
		{"example.invalid.", "198.18.0.1", "fdc0:de00::1"}, // case and trailing dot fold
		{"localhost", "198.18.0.2", "fdc0:de00::2"},
		{"third.test", "198.18.0.3", "fdc0:de00::3"},
	} {
		v4, v6, ok := tab.lookup(tc.name)
		if !ok || v4.String() != tc.v4 || v6.String() != tc.v6 {
			t.Errorf("%d: lookup(%q) = %v %v %v, want %s %s", i, tc.name, v4, v6, ok, tc.v4, tc.v6)
		}
	}
	for addr, want := range map[string]string{
		"198.18.0.1": "example.invalid", "fdc0:de00::2": "localhost", "::ffff:198.18.0.3": "third.test",
		"198.18.0.4": "", "198.18.0.0": "", "198.19.0.1": "", "10.0.0.1": "", "fdc0:de01::1": "", "::1": "",
	} {
		got, ok := tab.name(netip.MustParseAddr(addr))
		if got != want || ok != (want != "") {
			t.Errorf("name(%s) = %q %v, want %q", addr, got, ok, want)
		}
	}
	for addr, want := range map[string]bool{"198.18.0.0": true, "198.18.255.254": true, "198.18.255.255": false,
		"198.19.0.0": false, "198.17.255.255": false, "fdc0:de00::fffe": true, "fdc0:de00::ffff": false, "fdc0:de00::1:0": false, "192.0.2.1": false} {
		if got := isFake(netip.MustParseAddr(addr)); got != want {
			t.Errorf("isFake(%s) = %v, want %v", addr, got, want)
		}
	}
}

func TestFakeTable_Full(t *testing.T) {
	tab := newFakeTable()
	tab.names = make([]string, maxNames) // as if every index were handed out
	if _, _, ok := tab.lookup("one.more"); ok {
		t.Fatal("lookup past maxNames succeeded")
	}
	last := fakeAddr(FakeBase4, maxNames)
	if last.String() != "198.18.255.254" {
		t.Errorf("last v4 address: got %s, want 198.18.255.254", last)
	}
}
