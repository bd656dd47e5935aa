package e2e_test

import (
	"net"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
)

// TestForward_SlowTarget: a target that accepts TCP but never answers the WebSocket
// upgrade. Through each release's forwarder the harness's stream opens and is then ended
// (the target connect times out), the harness reconnects and finally fails: exec exits 255
// after about 35 s with a 5 s reconnect window. Ours must fail the same way, in about the
// same time (within 10 s of the release's; its connect timeout is 10 s).
func TestForward_SlowTarget(t *testing.T) {
	run := func(t *testing.T, ref *refbin.Release) execResult {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() { // accepts and holds connections until ln closes
			var held []net.Conn
			defer func() {
				for _, c := range held {
					c.Close()
				}
			}()
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				held = append(held, c)
			}
		}()
		rig := startForwardRig(t)
		rig.startForwarder(t, ref, "env-slow", "ws://"+ln.Addr().String())
		res := runExec(t, 120*time.Second, "", append(rig.target("env-slow"), "--reconnect-timeout", "5s", "--", "echo", "hi")...)
		t.Logf("slow target: exec exit %d after %v, stdout %q, stderr %q", res.code, res.took, res.stdout, res.stderr)
		if res.code != 255 || res.stdout != "" {
			t.Errorf("exec through a forwarder whose target never answers: exit %d, stdout %q; want 255 and nothing", res.code, res.stdout)
		}
		return res
	}
	var ours execResult
	t.Run("ours", func(t *testing.T) { ours = run(t, nil) })
	refbin.ForEachRelease(t, func(t *testing.T, rel refbin.Release) {
		ref := run(t, &rel)
		if d := ours.took - ref.took; d > 10*time.Second || d < -10*time.Second {
			t.Errorf("exec failed after %v through ours, %v through %s's forwarder", ours.took, ref.took, rel.Version)
		}
	})
}
