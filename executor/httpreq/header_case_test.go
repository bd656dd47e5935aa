package httpreq_test

import (
	"bufio"
	"net"
	"net/textproto"
	"slices"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// TestRequest_HeaderNamesLowerCase reads the raw request head: header names the client
// gave go out lower-cased as the reference sends them (X-Auth → x-auth, repeated names
// kept in order), while the names net/http manages itself keep one canonical spelling
// and are not duplicated.
func TestRequest_HeaderNamesLowerCase(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	head := make(chan []string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			head <- nil
			return
		}
		defer c.Close()
		r := textproto.NewReader(bufio.NewReader(c))
		var lines []string
		for {
			l, err := r.ReadLine()
			if err != nil || l == "" {
				break
			}
			lines = append(lines, l)
		}
		head <- lines
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
	}()
	cl, _ := newClient(t, nil)
	body := jsonwire.Bytes("hi")
	_, err = cl.Request(ctx, &protocol.HTTPRequestParams{
		Method: "POST", URL: "http://" + ln.Addr().String() + "/x", RequestID: "r1",
		Headers: []protocol.HTTPHeader{
			{Name: "X-Auth", Value: "a"}, {Name: "Content-Type", Value: "text/plain"},
			{Name: "user-agent", Value: "ua"}, {Name: "x-AUTH", Value: "b"},
		},
		BodyBase64: &body,
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := <-head
	<-done
	for _, want := range []string{"x-auth: a", "x-auth: b", "content-type: text/plain", "User-Agent: ua", "Content-Length: 2"} {
		if !slices.Contains(lines, want) {
			t.Errorf("request head %q lacks %q", lines, want)
		}
	}
	var ua int
	for _, l := range lines {
		if strings.HasPrefix(strings.ToLower(l), "user-agent:") {
			ua++
		}
		if strings.HasPrefix(l, "X-Auth") || strings.HasPrefix(l, "Content-Type") {
			t.Errorf("header sent in canonical case: %q", l)
		}
	}
	if ua != 1 {
		t.Errorf("%d user-agent lines in %q, want 1", ua, lines)
	}
	if i, j := slices.Index(lines, "x-auth: a"), slices.Index(lines, "x-auth: b"); i < 0 || j < i {
		t.Errorf("repeated header out of order in %q", lines)
	}
}
