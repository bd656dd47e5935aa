package harness_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
)

// startOverFake initializes c against the fake server with the given capabilities JSON and
// starts process "p", returning the process/start params as sent.
func startOverFake(t *testing.T, c *harness.Client, srv *fakeServer, caps string) string {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := c.Initialize(context.Background(), "t", "")
		done <- err
	}()
	srv.recv()
	srv.send(`{"id":1,"result":{"sessionId":"s","environmentInfo":{"capabilities":` + caps + `}}}`)
	srv.recv() // initialized
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	go func() {
		_, err := c.StartProcess(context.Background(), protocol.ProcessStartParams{ProcessID: "p", Argv: []string{"x"}, Cwd: "file:///", Env: map[string]string{}})
		done <- err
	}()
	start := srv.recv()
	srv.send(`{"id":2,"result":{"processId":"p","sandboxType":"none"}}`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return string(start.Params)
}

// TestOutputAck_NotUsedWithoutFlag: against an executor that does not advertise
// processOutputAck (every released one) the SDK sends no outputAck and no process/ack:
// the bytes on the wire are the released client's.
func TestOutputAck_NotUsedWithoutFlag(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, srv := openFake(t, nil)
		defer c.Close()
		params := startOverFake(t, c, srv, `{"processExitStatus":true}`)
		if strings.Contains(params, "outputAck") {
			t.Fatalf("process/start params %s carry outputAck without the flag", params)
		}
		srv.send(`{"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":"YQ=="}}`)
		srv.send(`{"method":"process/closed","params":{"processId":"p","seq":2}}`)
		<-c.Notifications()
		<-c.Notifications()
		synctest.Wait()
		// The next message the client sends must be this call, not an ack.
		go func() { _ = c.Call(context.Background(), "environment/info", nil, nil) }()
		if m := srv.recv(); m.Method != "environment/info" {
			t.Fatalf("client sent %s, want no process/ack", m.raw)
		}
		srv.send(`{"id":3,"result":{}}`)
	})
}

// TestOutputAck_AcksWhatTheConsumerTook: with the flag, process/start carries outputAck
// and the client acknowledges consumed events cumulatively: every 256 events (or 256 KiB),
// and at once for the close.
func TestOutputAck_AcksWhatTheConsumerTook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, srv := openFake(t, nil)
		defer c.Close()
		params := startOverFake(t, c, srv, `{"processOutputAck":true}`)
		if !strings.Contains(params, `"outputAck":true`) {
			t.Fatalf("process/start params %s, want outputAck true", params)
		}
		// From here the fake server reads in the background: an ack write must not wait
		// for the test.
		sent := make(chan string, 16)
		go func() {
			for {
				b, err := srv.p.ReadMessage(context.Background())
				if err != nil {
					close(sent)
					return
				}
				sent <- string(b)
			}
		}()
		// 300 small events: one ack after the 256th consumed (the event threshold), none
		// before the consumer took them.
		for seq := 1; seq <= 300; seq++ {
			srv.send(fmt.Sprintf(`{"method":"process/output","params":{"processId":"p","seq":%d,"stream":"stdout","chunk":"YQ=="}}`, seq))
			if seq == 3 {
				synctest.Wait()
				if len(sent) != 0 {
					t.Fatalf("%d acks sent before the consumer took anything", len(sent))
				}
			}
			<-c.Notifications()
		}
		synctest.Wait()
		if len(sent) != 1 {
			t.Fatalf("%d acks after 300 small events, want 1", len(sent))
		}
		if m := <-sent; m != `{"method":"process/ack","params":{"processId":"p","seq":256}}` {
			t.Fatalf("ack %s, want seq 256", m)
		}
		srv.send(`{"method":"process/closed","params":{"processId":"p","seq":301}}`)
		<-c.Notifications()
		if m := <-sent; m != `{"method":"process/ack","params":{"processId":"p","seq":301}}` {
			t.Fatalf("after the close the client sent %s, want the ack of seq 301", m)
		}
	})
}
