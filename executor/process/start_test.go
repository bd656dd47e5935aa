package process_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// Check order (spec/jsonrpc.md §3.1): networkProxy, shellSnapshot, sandbox, cwd, then
// empty argv, then duplicate id.
func TestStart_CheckOrder(t *testing.T) {
	m := newManager(t, nil)
	good := tmpURI(t)
	mustStart(t, m, startParams("dup", good, "sleep", "5"))
	t.Cleanup(func() { _, _ = m.Terminate(context.Background(), &protocol.ProcessTerminateParams{ProcessID: "dup"}) })
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	disabled := sandboxContext(t, `{"permissions":{"type":"disabled"},"windowsSandboxLevel":"disabled"}`)
	tests := []struct {
		name string
		edit func(p *protocol.ProcessStartParams)
		code int
		msg  string
	}{
		{"networkProxy beats all", func(p *protocol.ProcessStartParams) {
			p.NetworkProxy, p.ShellSnapshot, p.Sandbox = raw(`{"proxy":{"enabled":false,"enableSocks5":false,"enableSocks5Udp":false,
				"allowUpstreamProxy":false,"dangerouslyAllowAllUnixSockets":false,"mode":"full","allowLocalBinding":false}}`), raw(`{}`), disabled
			p.Cwd, p.Argv = "file://server/share", nil
		}, -32602, "invalid network proxy config: executor-local network proxy launch requires an enabled proxy"},
		{"shellSnapshot decoding beats sandbox", func(p *protocol.ProcessStartParams) {
			p.ShellSnapshot, p.Sandbox, p.Argv = raw(`{"scopeId":"s"}`), disabled, nil
		}, -32602, "missing field `shell`"},
		{"empty argv beats the shellSnapshot checks", func(p *protocol.ProcessStartParams) {
			p.ShellSnapshot, p.Argv = raw(`{"scopeId":"","shell":{"name":"bash","path":"/bin/bash"}}`), nil
		}, -32602, "argv must not be empty"},
		{"shellSnapshot without a session cache", func(p *protocol.ProcessStartParams) {
			p.ShellSnapshot, p.Argv = raw(`{"scopeId":"s","shell":{"name":"bash","path":"/bin/bash"}}`), []string{"/bin/bash", "-lc", "true"}
		}, -32602, "shell snapshots are unsupported on this platform"},
		{"sandbox fails closed without a launcher", func(p *protocol.ProcessStartParams) {
			p.Sandbox, p.Cwd, p.Argv = disabled, "file://server/share", nil
		}, -32602, "sandbox intent cannot be enforced on this executor: sandbox support is not configured"},
		{"managed network fails closed without a launcher", func(p *protocol.ProcessStartParams) {
			p.EnforceManagedNetwork, p.Argv = true, nil
		}, -32602, "sandbox intent cannot be enforced on this executor: sandbox support is not configured"},
		{"bad cwd beats empty argv", func(p *protocol.ProcessStartParams) {
			p.Cwd, p.Argv = "file://server/share/x", nil
		}, -32602, "cwd URI `file://server/share/x` is not valid on this exec-server host: 'file://server/share/x' is invalid on 'linux'"},
		{"empty argv beats duplicate", func(p *protocol.ProcessStartParams) {
			p.Argv = nil
		}, -32602, "argv must not be empty"},
		{"duplicate", func(p *protocol.ProcessStartParams) {}, -32600, "process dup already exists"},
		{"null members are absent", func(p *protocol.ProcessStartParams) {
			p.NetworkProxy, p.ShellSnapshot, p.Sandbox = raw(`null`), raw(`null`), nil
			p.Argv = nil
		}, -32602, "argv must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startParams("dup", good, "true")
			tt.edit(p)
			_, err := m.Start(context.Background(), p)
			wantRPCError(t, err, tt.code, tt.msg)
		})
	}
}

// Spawn-failure texts, observed from codex 0.169.0 (see also reference_test.go).
func TestStart_SpawnFailureTexts(t *testing.T) {
	dir := t.TempDir()
	noexec := filepath.Join(dir, "noexec")
	if err := os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	cwd := protocol.FromNative(dir)
	for _, tt := range spawnErrorCases(dir, home) {
		t.Run(tt.name, func(t *testing.T) {
			m := newManager(t, nil)
			p := &protocol.ProcessStartParams{ProcessID: "x", Argv: tt.argv, Cwd: cwd, Env: tt.env, Tty: tt.tty, Arg0: tt.arg0}
			if tt.cwd != "" {
				p.Cwd = protocol.FromNative(tt.cwd)
			}
			_, err := m.Start(context.Background(), p)
			wantRPCError(t, err, -32603, tt.want)
			wantKind(t, err, tt.kind)
			// The entry is removed: the id is free again.
			mustStart(t, m, startParams("x", cwd, "true"))
			readUntilClosed(t, m, "x")
		})
	}
}

type spawnErrorCase struct {
	name string
	argv []string
	arg0 *string
	env  map[string]string
	tty  bool
	cwd  string // native; "" = the test dir
	want string
	kind string // error.data.kind (codex 0.171.0); "" = spawnFailed
}

// spawnErrorCases are shared with the differential test; dir holds "noexec" (mode 644)
// and "adir".
func spawnErrorCases(dir, home string) []spawnErrorCase {
	path := map[string]string{"PATH": dir}
	return []spawnErrorCase{
		{name: "pipe missing program", argv: []string{"nonexist-x"}, env: map[string]string{}, want: "No such file or directory (os error 2)", kind: "spawnNotFound"},
		{name: "pipe not executable", argv: []string{dir + "/noexec"}, env: map[string]string{}, want: "Permission denied (os error 13)", kind: "spawnPermissionDenied"},
		{name: "pipe not executable on PATH", argv: []string{"noexec"}, env: path, want: "Permission denied (os error 13)", kind: "spawnPermissionDenied"},
		{name: "pipe directory on PATH", argv: []string{"adir"}, env: path, want: "Permission denied (os error 13)", kind: "spawnPermissionDenied"},
		{name: "pipe missing cwd", argv: []string{"true"}, env: map[string]string{}, cwd: dir + "/missing", want: "No such file or directory (os error 2)", kind: "spawnNotFound"},
		{name: "pipe cwd not a directory", argv: []string{"true"}, env: map[string]string{}, cwd: dir + "/noexec", want: "Not a directory (os error 20)"},
		{name: "pipe empty program", argv: []string{""}, env: map[string]string{}, want: "missing program for pipe spawn"},
		{name: "pipe nul in argv", argv: []string{"/bin/true", "a\x00"}, env: map[string]string{}, want: "nul byte found in provided data"},
		{name: "pipe nul in env", argv: []string{"/bin/true"}, env: map[string]string{"A": "\x00"}, want: "data provided contains a nul byte"},
		{name: "pty empty program", argv: []string{""}, arg0: str("x"), env: map[string]string{}, tty: true, want: "missing program for PTY spawn"},
		{name: "pty no PATH", argv: []string{"nonexist-x"}, env: map[string]string{}, tty: true, want: "Unable to spawn nonexist-x because:\nUnable to resolve the PATH"},
		{name: "pty not on PATH", argv: []string{"nonexist-x"}, env: map[string]string{"PATH": "/usr/bin:/bin"}, tty: true,
			want: "Unable to spawn nonexist-x because:\nNo viable candidates found in PATH \"/usr/bin:/bin\""},
		{name: "pty candidates listed", argv: []string{"noexec"}, env: map[string]string{"PATH": dir + ":" + dir}, tty: true,
			want: "Unable to spawn noexec because:\n" + dir + "/noexec exists but is not executable.\n" + dir + "/noexec exists but is not executable.\nNo viable candidates found in PATH \"" + dir + ":" + dir + "\""},
		{name: "pty directory candidate", argv: []string{"adir"}, env: path, tty: true,
			want: "Unable to spawn adir because:\n" + dir + "/adir exists but is a directory.\nNo viable candidates found in PATH \"" + dir + "\""},
		{name: "pty PATH debug-quoted", argv: []string{"x"}, env: map[string]string{"PATH": "a\"b\\c\td"}, tty: true,
			want: "Unable to spawn x because:\nNo viable candidates found in PATH \"a\\\"b\\\\c\\td\""},
		{name: "pty relative missing", argv: []string{"./nope"}, env: map[string]string{}, tty: true, want: "Unable to spawn " + dir + "/./nope because it does not exist"},
		{name: "pty relative not executable", argv: []string{"./noexec"}, env: map[string]string{}, tty: true, want: "Unable to spawn " + dir + "/./noexec because it is not executable"},
		{name: "pty relative directory", argv: []string{"."}, env: map[string]string{}, tty: true, want: "Unable to spawn " + dir + "/. because it is a directory"},
		{name: "pty relative with missing cwd uses home", argv: []string{"./nope-h4"}, env: map[string]string{}, tty: true, cwd: dir + "/missing",
			want: "Unable to spawn " + home + "/./nope-h4 because it does not exist"},
		{name: "pty absolute missing", argv: []string{"/nonexist"}, env: map[string]string{}, tty: true, want: "No such file or directory (os error 2)", kind: "spawnNotFound"},
		{name: "pty absolute not executable", argv: []string{dir + "/noexec"}, env: map[string]string{}, tty: true, want: "Permission denied (os error 13)", kind: "spawnPermissionDenied"},
		{name: "pty absolute missing with arg0", argv: []string{"/nonexist"}, arg0: str("sh"), env: map[string]string{}, tty: true,
			want: "No such file or directory (os error 2)", kind: "spawnNotFound"},
		{name: "pty nul in argv", argv: []string{"/bin/true", "a\x00"}, env: map[string]string{}, tty: true, want: "nul byte found in provided data"},
		{name: "pty nul in env", argv: []string{"/bin/true"}, env: map[string]string{"A": "\x00"}, tty: true, want: "data provided contains a nul byte"},
	}
}

// Of two concurrent starts with one id exactly one wins.
func TestStart_ConcurrentDuplicate(t *testing.T) {
	m := newManager(t, nil)
	cwd := tmpURI(t)
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = m.Start(context.Background(), startParams("proc-1", cwd, "sleep", "5"))
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
			continue
		}
		wantRPCError(t, err, -32600, "process proc-1 already exists")
	}
	if wins != 1 {
		t.Fatalf("successful starts = %d, want 1", wins)
	}
	res, err := m.Terminate(context.Background(), &protocol.ProcessTerminateParams{ProcessID: "proc-1"})
	if err != nil || !res.Running {
		t.Fatalf("Terminate = %+v, %v; want running true", res, err)
	}
	readUntilClosed(t, m, "proc-1")
}

// Terminate while Starting removes the entry (running:true) and the start fails.
func TestStart_TerminateDuringStarting(t *testing.T) {
	m := newManager(t, nil)
	var res *protocol.ProcessTerminateResult
	var termErr error
	var readErr error
	var write *protocol.ProcessWriteResult
	restore := process.SetSpawningHook(func(id string) {
		_, readErr = m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: id})
		write, _ = m.Write(context.Background(), &protocol.ProcessWriteParams{ProcessID: id, WriteID: "w", Chunk: []byte("x")})
		res, termErr = m.Terminate(context.Background(), &protocol.ProcessTerminateParams{ProcessID: id})
	})
	_, err := m.Start(context.Background(), startParams("p", tmpURI(t), "sleep", "5"))
	restore()
	wantRPCError(t, err, -32600, "process p start was cancelled")
	wantRPCError(t, readErr, -32600, "process id p is starting")
	if write == nil || write.Status != protocol.WriteStarting {
		t.Fatalf("Write during Starting = %+v, want starting", write)
	}
	if termErr != nil || !res.Running {
		t.Fatalf("Terminate during Starting = %+v, %v; want running true", res, termErr)
	}
	// The id is free.
	mustStart(t, m, startParams("p", tmpURI(t), "true"))
	readUntilClosed(t, m, "p")
}

func TestStart_Arg0(t *testing.T) {
	for _, tty := range []bool{false, true} {
		t.Run("tty="+strconv.FormatBool(tty), func(t *testing.T) {
			m := newManager(t, nil)
			p := startParams("p", tmpURI(t), "/bin/sh", "-c", "echo $0")
			p.Arg0, p.Tty = str("custom-arg0"), tty // PTY too: arg0 only sets $0 (codex 0.171.0)
			mustStart(t, m, p)
			out, _ := readUntilClosed(t, m, "p")
			got := strings.TrimSpace(string(out[protocol.StreamStdout]) + string(out[protocol.StreamPty]))
			if got != *p.Arg0 {
				t.Fatalf("$0 = %q, want %q", got, *p.Arg0)
			}
		})
	}
}

// Under a PTY, arg0 names no program: a value that resolves nowhere still starts
// argv[0] (codex 0.171.0; 0.169.0 ran arg0 and failed with "Unable to spawn …").
func TestStart_PtyArg0NotResolved(t *testing.T) {
	m := newManager(t, nil)
	for i, a0 := range []string{"nonexist-zz", "/nonexist/abs"} {
		id := "p" + strconv.Itoa(i)
		p := startParams(id, tmpURI(t), "/bin/sh", "-c", "echo $0")
		p.Arg0, p.Tty = str(a0), true
		mustStart(t, m, p)
		out, _ := readUntilClosed(t, m, id)
		if got := strings.TrimSpace(string(out[protocol.StreamPty])); got != a0 {
			t.Fatalf("$0 = %q, want %q", got, a0)
		}
	}
}

// The child leads its own session and process group, and SIGPIPE is not ignored.
func TestStart_SessionAndSignals(t *testing.T) {
	for _, tty := range []bool{false, true} {
		t.Run("tty="+strconv.FormatBool(tty), func(t *testing.T) {
			m := newManager(t, nil)
			p := startParams("p", tmpURI(t), "/bin/sh", "-c", "cat /proc/$$/stat; grep SigIgn /proc/$$/status")
			p.Tty = tty
			mustStart(t, m, p)
			out, _ := readUntilClosed(t, m, "p")
			text := string(out[protocol.StreamStdout]) + string(out[protocol.StreamPty])
			stat, rest, _ := strings.Cut(text, "\n")
			i := strings.LastIndexByte(stat, ')')
			f := strings.Fields(stat[i+1:])
			pid := strings.Fields(stat)[0]
			if f[2] != pid || f[3] != pid {
				t.Fatalf("pgrp %s session %s, want both = pid %s", f[2], f[3], pid)
			}
			if tty != (f[4] != "0") {
				t.Fatalf("tty_nr = %s, want controlling terminal only with a PTY (tty=%v)", f[4], tty)
			}
			hex := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), "SigIgn:"))
			mask, err := strconv.ParseUint(hex, 16, 64)
			if err != nil {
				t.Fatalf("parsing SigIgn %q: %v", hex, err)
			}
			if mask&(1<<(13-1)) != 0 {
				t.Fatalf("SigIgn = %s: SIGPIPE is ignored in the child, want default", hex)
			}
		})
	}
}

// A PTY start whose cwd is missing runs in the home directory (HOME of the child env).
func TestPty_MissingCwdRunsAtHome(t *testing.T) {
	m := newManager(t, nil)
	home := t.TempDir()
	p := startParams("p", protocol.FromNative(filepath.Join(home, "missing")), "/bin/pwd")
	p.Tty, p.Env = true, map[string]string{"HOME": home}
	mustStart(t, m, p)
	out, _ := readUntilClosed(t, m, "p")
	if got := strings.TrimSpace(string(out[protocol.StreamPty])); got != home {
		t.Fatalf("pwd = %q, want %q", got, home)
	}
}

// With --tcp-upstream-proxy (TCPUpstreamProxy) every managed-network start without a
// networkProxy is refused after managedNetwork decoded, before argv is checked; a start
// without one runs (observed from codex 0.171.0).
func TestStart_MandatoryTCPUpstream(t *testing.T) {
	m := newManager(t, &process.Options{TCPUpstreamProxy: "127.0.0.1:9"})
	cwd := tmpURI(t)
	const upstream = "a mandatory TCP upstream requires an executor-local managed proxy"
	tests := []struct {
		name    string
		edit    func(p *protocol.ProcessStartParams)
		code    int
		msg     string
		started bool
	}{
		{"empty managedNetwork", func(p *protocol.ProcessStartParams) { p.ManagedNetwork = json.RawMessage(`{}`) }, -32602, upstream, false},
		{"enforceManagedNetwork", func(p *protocol.ProcessStartParams) { p.EnforceManagedNetwork = true }, -32602, upstream, false},
		{"empty argv", func(p *protocol.ProcessStartParams) { p.ManagedNetwork, p.Argv = json.RawMessage(`{}`), nil }, -32602, upstream, false},
		{"bad transparentTcp wins", func(p *protocol.ProcessStartParams) { p.ManagedNetwork = json.RawMessage(`{"transparentTcp":"x"}`) },
			-32602, `invalid type: string "x", expected a boolean`, false},
		{"transparentTcp wins", func(p *protocol.ProcessStartParams) { p.ManagedNetwork = json.RawMessage(`{"transparentTcp":true}`) },
			-32602, "transparent TCP requires an executor-local managed proxy", false},
		{"null managedNetwork", func(p *protocol.ProcessStartParams) { p.ManagedNetwork = json.RawMessage(`null`) }, 0, "", true},
		{"none", func(p *protocol.ProcessStartParams) {}, 0, "", true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := "u" + strconv.Itoa(i)
			p := startParams(id, cwd, "true")
			tt.edit(p)
			_, err := m.Start(context.Background(), p)
			if tt.started {
				if err != nil {
					t.Fatalf("Start: %v, want started", err)
				}
				readUntilClosed(t, m, id)
				return
			}
			wantRPCError(t, err, tt.code, tt.msg)
			var re *jsonwire.Error
			if errors.As(err, &re) && re.Data != nil {
				t.Errorf("error data = %s, want none", re.Data)
			}
		})
	}
}
