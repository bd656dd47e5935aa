package e2e_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
	"github.com/execlab/executor/registry/registrytest"
)

// `exec-server forward` end to end through our registry: ours forwarding to each
// released exec-server, and each released `codex exec-server forward` with our `serve` as
// the target; `executor exec` output and exit status come back through the bridge, and a
// target killed mid-command ends the harness's command instead of hanging it.

// forwardRig is our registry + rendezvous, in process.
type forwardRig struct {
	url, token, tokenFile string
	reg                   *registrytest.Registry
}

func startForwardRig(t *testing.T) *forwardRig {
	t.Helper()
	reg := registrytest.Start(t, nil)
	return &forwardRig{url: reg.URL, token: reg.Token, tokenFile: reg.TokenFile, reg: reg}
}

// startForwarder runs `exec-server forward` (ours when ref is nil) registered as env and
// bridging to target, and waits until the rendezvous sees it online.
func (rig *forwardRig) startForwarder(t *testing.T, ref *refbin.Release, env, target string) {
	t.Helper()
	rig.startExecServer(t, ref, env, "forward", "--remote", rig.url, "--environment-id", env, "--connect", target,
		"--registration-bearer-stdin", "--name", "fwd-test")
}

// startExecServer runs `exec-server args…` (ours when ref is nil) with the registry bearer
// on stdin (kept open) and waits until env is online. Cleanup requires exit status 0
// within 5 s of SIGTERM.
func (rig *forwardRig) startExecServer(t *testing.T, ref *refbin.Release, env string, args ...string) {
	t.Helper()
	cmd := refbin.Command(t, ref, oursFor(t, ref), append([]string{"exec-server"}, args...)...)
	refbin.Launch(t, cmd, &refbin.LaunchOptions{NoLine: true, Stdin: rig.token + "\n", Exit: refbin.ExitClean, Name: "exec-server"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rig.reg.WaitOnline(ctx, t, env, true)
}

func (rig *forwardRig) target(env string) []string {
	return []string{"--registry", rig.url, "--environment-id", env, "--token-file", rig.tokenFile}
}

// checkForwarded runs commands through the forwarder and compares output and status.
func checkForwarded(t *testing.T, rig *forwardRig, env string) {
	t.Helper()
	res := runExec(t, 60*time.Second, "", append(rig.target(env), "--", "sh", "-c", "echo out-$((6*7)); echo err >&2; exit 3")...)
	if res.stdout != "out-42\n" || res.code != 3 || !strings.Contains(res.stderr, "err") {
		t.Errorf("exec through the forwarder: stdout %q, exit %d, stderr %q; want out-42, 3, err", res.stdout, res.code, res.stderr)
	}
	res = runExec(t, 60*time.Second, "line one\nline two\n", append(rig.target(env), "-i", "--", "head", "-n", "1")...)
	if res.stdout != "line one\n" || res.code != 0 {
		t.Errorf("exec -i through the forwarder: stdout %q, exit %d, stderr %q; want line one, 0", res.stdout, res.code, res.stderr)
	}
}

func TestForward_OursToReleasedExecServer(t *testing.T) {
	refbin.ForEachRelease(t, func(t *testing.T, rel refbin.Release) {
		rig := startForwardRig(t)
		rig.startForwarder(t, nil, "env-fwd", startReferenceServe(t, rel))
		checkForwarded(t, rig, "env-fwd")
	})
}

func TestForward_ReleasedForwarderToOurServe(t *testing.T) {
	refbin.ForEachRelease(t, func(t *testing.T, rel refbin.Release) {
		rig := startForwardRig(t)
		rig.startForwarder(t, &rel, "env-fwd", startOursServe(t))
		checkForwarded(t, rig, "env-fwd")
	})
}

// TestForward_TargetKilled: the target dies while a command runs; the harness's exec ends
// (non-zero, within its short reconnect window) instead of hanging, for ours and for each
// release's forwarder. A target that is down from the start fails the same way.
func TestForward_TargetKilled(t *testing.T) {
	run := func(t *testing.T, ref *refbin.Release) {
		rig := startForwardRig(t)
		srvCmd := exec.Command(remoteExecutorBin(t), "serve", "--listen", "ws://127.0.0.1:0")
		srvCmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir()}
		s, m := startPrinting(t, "target", srvCmd, wsURLLine, 20*time.Second, "its URL")
		_ = s
		rig.startForwarder(t, ref, "env-kill", m[0])
		done := make(chan execResult, 1)
		go func() {
			done <- runExec(t, 90*time.Second, "", append(rig.target("env-kill"), "--reconnect-timeout", "5s", "--",
				"sh", "-c", "echo started; sleep 60")...)
		}()
		time.Sleep(2 * time.Second) // the command is running on the target
		_ = srvCmd.Process.Kill()
		select {
		case res := <-done:
			if res.code == 0 || !strings.Contains(res.stdout, "started") {
				t.Errorf("exec after the target died: stdout %q, exit %d, stderr %q; want started and a failure", res.stdout, res.code, res.stderr)
			}
			t.Logf("target killed: exec exit %d after %v, stderr %q", res.code, res.took, res.stderr)
		case <-time.After(80 * time.Second):
			t.Fatalf("exec hung after the target died")
		}
		res := runExec(t, 60*time.Second, "", append(rig.target("env-kill"), "--reconnect-timeout", "5s", "--", "true")...)
		if res.code == 0 {
			t.Errorf("exec with the target down: exit 0, want a failure")
		}
		t.Logf("target down: exec exit %d after %v, stderr %q", res.code, res.took, res.stderr)
	}
	t.Run("ours", func(t *testing.T) { run(t, nil) })
	refbin.ForEachRelease(t, func(t *testing.T, rel refbin.Release) { run(t, &rel) })
}

// TestExecServer_RemoteThroughRegistry: `executor exec-server --remote` (the reference's
// flags, including the ones only accepted here) registers with our registry and serves exec.
func TestExecServer_RemoteThroughRegistry(t *testing.T) {
	rig := startForwardRig(t)
	rig.startExecServer(t, nil, "env-es", "--remote", rig.url, "--environment-id", "env-es", "--registration-bearer-stdin",
		"--name", "es", "--concurrent-requests", "2", "--linux-sandbox-pid-namespace", "inherit", "--enable", "unified_exec",
		"-c", "model=\"o3\"", "--proxy-private-ips-via-upstream", "--remote-transport", "noise")
	res := runExec(t, 60*time.Second, "", append(rig.target("env-es"), "--", "sh", "-c", "echo via-exec-server; exit 7")...)
	if res.stdout != "via-exec-server\n" || res.code != 7 {
		t.Errorf("exec through exec-server --remote: stdout %q, exit %d, stderr %q", res.stdout, res.code, res.stderr)
	}
}
