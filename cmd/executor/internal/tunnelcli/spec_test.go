package tunnelcli

import (
	"bytes"
	"testing"
)

func TestParseLocal(t *testing.T) {
	tests := []struct {
		in   string
		want Forward
		ok   bool
	}{
		{"8080:localhost:80", Forward{"127.0.0.1:8080", "localhost", 80}, true},
		{"0.0.0.0:8080:db:5432", Forward{"0.0.0.0:8080", "db", 5432}, true},
		{"[::1]:8080:[fd00::1]:22", Forward{"[::1]:8080", "fd00::1", 22}, true},
		{"*:1:h:2", Forward{"0.0.0.0:1", "h", 2}, true},
		{"8080:h", Forward{}, false},
		{"8080:h:0", Forward{}, false},
		{"x:h:1", Forward{}, false},
		{"1:[h:2", Forward{}, false},
		{"1::2", Forward{}, false},
	}
	for _, tt := range tests {
		got, err := ParseLocal(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseLocal(%q) = %+v, %v; want %+v ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestParseSocks(t *testing.T) {
	for in, want := range map[string]string{"1080": "127.0.0.1:1080", "[::1]:1080": "[::1]:1080", "0.0.0.0:9": "0.0.0.0:9"} {
		if got, err := ParseSocks(in); err != nil || got != want {
			t.Errorf("ParseSocks(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseSocks("a:b:c"); err == nil {
		t.Error("ParseSocks(a:b:c): no error")
	}
}

type rw struct {
	bytes.Reader
	out bytes.Buffer
}

func (r *rw) Write(p []byte) (int, error) { return r.out.Write(p) }

func TestSocksRequest(t *testing.T) {
	tests := []struct {
		in        []byte
		host      string
		port      int
		ok        bool
		wantReply []byte
	}{
		{[]byte{5, 1, 0, 5, 1, 0, 3, 9, 'l', 'o', 'c', 'a', 'l', 'h', 'o', 's', 't', 0, 80}, "localhost", 80, true, []byte{5, 0}},
		{[]byte{5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, 0x1f, 0x90}, "127.0.0.1", 8080, true, []byte{5, 0}},
		{append(append([]byte{5, 1, 0, 5, 1, 0, 4}, make([]byte, 15)...), 1, 0, 22), "::1", 22, true, []byte{5, 0}},
		{[]byte{5, 1, 2}, "", 0, false, []byte{5, 0xff}},
		{[]byte{5, 1, 0, 5, 2, 0, 1, 1, 2, 3, 4, 0, 1}, "", 0, false, []byte{5, 0, 5, 7, 0, 1, 0, 0, 0, 0, 0, 0}},
		{[]byte{4, 1, 0}, "", 0, false, nil},
	}
	for i, tt := range tests {
		c := &rw{Reader: *bytes.NewReader(tt.in)}
		host, port, err := socksRequest(c)
		if (err == nil) != tt.ok || host != tt.host || port != tt.port {
			t.Errorf("%d: got %q %d %v; want %q %d ok=%v", i, host, port, err, tt.host, tt.port, tt.ok)
		}
		if !bytes.Equal(c.out.Bytes(), tt.wantReply) {
			t.Errorf("%d: replied % x, want % x", i, c.out.Bytes(), tt.wantReply)
		}
	}
}

func FuzzSocksRequest(f *testing.F) {
	f.Add([]byte{5, 1, 0, 5, 1, 0, 3, 1, 'h', 0, 80})
	f.Add([]byte{5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, 0, 80})
	f.Add([]byte{5, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		c := &rw{Reader: *bytes.NewReader(b)}
		_, port, err := socksRequest(c)
		if err == nil && (port < 0 || port > 65535) {
			t.Fatalf("port %d", port)
		}
	})
}

func FuzzParseLocal(f *testing.F) {
	f.Add("8080:localhost:80")
	f.Add("[::1]:1:[::2]:3")
	f.Fuzz(func(t *testing.T, s string) {
		if fw, err := ParseLocal(s); err == nil && (fw.Port <= 0 || fw.Port > 65535 || fw.Host == "") {
			t.Fatalf("ParseLocal(%q) = %+v", s, fw)
		}
	})
}
