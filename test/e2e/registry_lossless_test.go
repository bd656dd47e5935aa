package e2e_test

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
)

// TestRegistryRecovery_LosslessBulkAcrossRestart: an in-process harness (race-checked)
// streams 6.9 MB of `seq` output from our executor; after 1 MiB the registry and rendezvous
// are killed for 2 s, so the process runs on detached and produces far more than the
// released 1 MiB ring. Acknowledged output (docs/reliability.md) delivers every byte once,
// in order, with no gap event and exit 0.
func TestRegistryRecovery_LosslessBulkAcrossRestart(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	const env = "env-lossless"
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	reg := startOnlineRemote(ctx, t, env)

	var reconnected atomic.Int32
	c, err := harness.Dial(ctx, &harness.RemoteOptions{
		Registry: reg.URL, EnvironmentID: env, Token: reg.Token, RecoveryTimeout: time.Minute,
		OnReconnect: func(done bool, err error) {
			if done && err == nil {
				reconnected.Add(1)
			}
		},
	})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, "lossless-test", ""); err != nil {
		t.Fatal(err)
	}
	if !c.Capabilities().ProcessOutputAck {
		t.Fatal("our executor does not advertise processOutputAck")
	}
	const lines = 1_000_000 // `seq 1000000` is 6.9 MB
	t.Logf("%v: starting", time.Now().Format("15:04:05.000"))
	if _, err := c.StartProcess(ctx, protocol.ProcessStartParams{
		ProcessID: "bulk", Argv: []string{"seq", "1000000"}, Cwd: protocol.FromNative("/"),
		Env: map[string]string{"PATH": "/usr/bin:/bin"},
	}); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	for i := 1; i <= lines; i++ {
		want.WriteString(itoa(i))
		want.WriteByte('\n')
	}
	var got bytes.Buffer
	evs := harness.NewProcessEvents("bulk")
	var batch []harness.ProcessEvent
	killed := false
	exit := int32(-1)
	for !evs.Done() {
		var n harness.Notification
		select {
		case nn, ok := <-c.Notifications():
			if !ok {
				t.Fatalf("connection ended: %v", c.Err())
			}
			n = nn
		case <-ctx.Done():
			t.Fatalf("stalled after %d bytes", got.Len())
		}
		if batch, err = evs.Add(batch[:0], n); err != nil {
			t.Fatal(err)
		}
		for _, ev := range batch {
			switch ev.Kind {
			case harness.EventOutput:
				got.Write(ev.Chunk)
			case harness.EventGap:
				t.Fatalf("gap %d-%d reported by a lossless executor", ev.Seq, ev.LastSeq)
			case harness.EventExited:
				exit = ev.ExitCode
			}
		}
		if !killed && got.Len() >= 1<<20 {
			killed = true
			t.Logf("%v: killing after %d bytes", time.Now().Format("15:04:05.000"), got.Len())
			reg.Kill()
			time.Sleep(2 * time.Second) // the outage; the process keeps writing meanwhile
			reg.Restart()
			t.Logf("%v: restarted", time.Now().Format("15:04:05.000"))
		}
	}
	t.Logf("%v: done", time.Now().Format("15:04:05.000"))
	if exit != 0 || !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("got %d of %d bytes (equal %v), exit %d; want all, exit 0", got.Len(), want.Len(), bytes.Equal(got.Bytes(), want.Bytes()), exit)
	}
	if reconnected.Load() == 0 {
		t.Error("no recovery happened: the outage did not break the stream")
	}
}
