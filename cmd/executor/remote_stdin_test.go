package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/registry/client"
)

// eventTimeout guards each wait for a registry request; events normally arrive within
// about a second (one reconnect backoff).
const eventTimeout = 20 * time.Second

// fakeRegistry answers register with a rendezvous URL on itself whose upgrade is refused
// with 401, so the executor re-registers about once a second (spec §8.2: re-register after a
// 4xx upgrade). Each register's authorization header is sent on auths.
type fakeRegistry struct {
	srv   *httptest.Server
	auths chan string
}

func newFakeRegistry(t *testing.T) *fakeRegistry {
	t.Helper()
	f := &fakeRegistry{auths: make(chan string, 1024)}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/register") {
			select {
			case f.auths <- r.Header.Get("Authorization"):
			default:
			}
			fmt.Fprintf(w, `{"environment_id":"env-1","url":"ws://%s/rdv?sig=x","security_profile":"noise_hybrid_ik_v1","executor_registration_id":"reg-1"}`, r.Host)
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(func() { f.srv.CloseClientConnections(); f.srv.Close() })
	return f
}

// next returns the authorization of the next register.
func (f *fakeRegistry) next(t *testing.T) string {
	t.Helper()
	select {
	case a := <-f.auths:
		return a
	case <-time.After(eventTimeout):
		t.Fatal("no register request")
		return ""
	}
}

// remoteProc is runRemote running on a goroutine with stdin on an io.Pipe.
type remoteProc struct {
	t      *testing.T
	stdin  *io.PipeWriter
	cancel context.CancelFunc
	done   chan error
}

func startRemote(t *testing.T, reg *fakeRegistry, args ...string) *remoteProc {
	t.Helper()
	t.Setenv("CODEX_HOME", t.TempDir()) // no auth.json fallback
	t.Setenv("HOME", t.TempDir())
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	p := &remoteProc{t: t, stdin: pw, cancel: cancel, done: make(chan error, 1)}
	all := append([]string{"--registry", reg.srv.URL, "--environment-id", "env-1", "--log-level", "error"}, args...)
	go func() { p.done <- runRemote(ctx, all, pr, io.Discard, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		pw.Close()
		select {
		case <-p.done:
		case <-time.After(eventTimeout):
			t.Error("runRemote did not return after cancel")
		}
	})
	return p
}

// send writes one line and, with an empty write, waits until the reader has consumed it
// and asked for more (so a frame has been applied before send returns).
func (p *remoteProc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("writing stdin: %v", err)
	}
	_, _ = p.stdin.Write(nil)
}

func (p *remoteProc) wait() error {
	p.t.Helper()
	select {
	case err := <-p.done:
		p.done <- err // for the cleanup
		return err
	case <-time.After(eventTimeout):
		p.t.Fatal("runRemote did not return")
		return nil
	}
}

func credFrame(token string) string {
	return fmt.Sprintf(`{"version":1,"token":%q,"environment_id":"env-1","expires_at":%d}`, token, time.Now().Unix()+3600)
}

// TestRemoteStdin_CredentialRotation: the bearer of each register is the newest frame's, and
// EOF stops the executor with status 0 (observed from codex 0.169.0).
func TestRemoteStdin_CredentialRotation(t *testing.T) {
	reg := newFakeRegistry(t)
	p := startRemote(t, reg, "--executor-credential-stdin")
	p.send(credFrame("tok-A"))
	if got := reg.next(t); got != "Bearer tok-A" {
		t.Fatalf("first register: got %q, want Bearer tok-A", got)
	}
	p.send(credFrame("tok-B"))
	// A register already in flight may still carry tok-A; the one after it must not.
	got := reg.next(t)
	if got == "Bearer tok-A" {
		got = reg.next(t)
	}
	if got != "Bearer tok-B" {
		t.Fatalf("register after the second frame: got %q, want Bearer tok-B", got)
	}
	p.stdin.Close()
	if err := p.wait(); err != nil {
		t.Errorf("after EOF: got %v, want nil (exit 0)", err)
	}
}

// TestRemoteStdin_CredentialRejectedFrameExits: a bad frame after start-up ends the
// executor with the frame error (exit 1).
func TestRemoteStdin_CredentialRejectedFrameExits(t *testing.T) {
	tests := []struct {
		name, line string
		want       error
	}{
		{"invalid", "{}", client.ErrInvalidCredentialFrame},
		{"other environment", `{"version":1,"token":"t","environment_id":"env-2","expires_at":99999999999}`, client.ErrCredentialWrongEnvironment},
		{"expired", `{"version":1,"token":"t","environment_id":"env-1","expires_at":1}`, client.ErrCredentialExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := newFakeRegistry(t)
			p := startRemote(t, reg, "--executor-credential-stdin")
			p.send(credFrame("tok-A"))
			reg.next(t)
			io.WriteString(p.stdin, tt.line+"\n")
			if err := p.wait(); !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
}

// TestRemoteStdin_CredentialStartup: what ends start-up before any register.
func TestRemoteStdin_CredentialStartup(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  error
	}{
		{"EOF without a frame", "", client.ErrCredentialPipeClosed},
		{"frame then EOF at once", credFrame("tok-A") + "\n", client.ErrCredentialPipeClosed},
		{"invalid first frame", "{}\n", client.ErrInvalidCredentialFrame},
		{"partial line at EOF", credFrame("tok-A"), client.ErrInvalidCredentialFrame},
		{"oversized line", strings.Repeat("x", client.MaxCredentialFrameLine+1), client.ErrCredentialFrameTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := newFakeRegistry(t)
			t.Setenv("CODEX_HOME", t.TempDir())
			err := runRemote(context.Background(), []string{"--registry", reg.srv.URL, "--environment-id", "env-1",
				"--executor-credential-stdin"}, strings.NewReader(tt.input), io.Discard, io.Discard)
			if !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
			select {
			case a := <-reg.auths:
				t.Errorf("got a register (%d bytes of authorization), want none", len(a))
			default:
			}
		})
	}
}

// TestRemoteStdin_CancelWhileWaitingForFrame: a signal during the wait for the first frame
// is a clean exit.
func TestRemoteStdin_CancelWhileWaitingForFrame(t *testing.T) {
	reg := newFakeRegistry(t)
	p := startRemote(t, reg, "--executor-credential-stdin")
	p.stdin.Write(nil) // the pump is reading
	p.cancel()
	if err := p.wait(); err != nil {
		t.Errorf("got %v, want nil", err)
	}
}

// TestRemoteStdin_ExitOnStdinClose: with the flag (or its environment variable) EOF after
// start-up stops the executor with status 0; without it EOF is ignored.
func TestRemoteStdin_ExitOnStdinClose(t *testing.T) {
	tests := []struct {
		name   string
		env    map[string]string
		args   []string
		bearer bool
		exits  bool
	}{
		{"bearer with flag", nil, []string{"--registration-bearer-stdin", "--exit-on-stdin-close"}, true, true},
		{"bearer with env", map[string]string{"CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE": "true"}, []string{"--registration-bearer-stdin"}, true, true},
		{"api key with alias env", map[string]string{"EXECUTOR_EXIT_ON_STDIN_CLOSE": "true", "CODEX_API_KEY": "sk-test"}, nil, false, true},
		{"env false", map[string]string{"CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE": "false"}, []string{"--registration-bearer-stdin"}, true, false},
		{"bearer without flag", nil, []string{"--registration-bearer-stdin"}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			reg := newFakeRegistry(t)
			p := startRemote(t, reg, tt.args...)
			want := "Bearer sk-test"
			if tt.bearer {
				// not send: without a pump nothing reads stdin after the bearer line
				if _, err := io.WriteString(p.stdin, "tok-line\n"); err != nil {
					t.Fatal(err)
				}
				want = "Bearer tok-line"
			}
			if got := reg.next(t); got != want {
				t.Fatalf("register: got %q, want %q", got, want)
			}
			p.stdin.Close()
			if tt.exits {
				if err := p.wait(); err != nil {
					t.Errorf("after EOF: got %v, want nil (exit 0)", err)
				}
				return
			}
			// EOF ignored: two more registers happen after it, and the run is still going.
			reg.next(t)
			reg.next(t)
			select {
			case err := <-p.done:
				p.done <- err
				t.Fatalf("runRemote returned %v after EOF, want it to keep running", err)
			default:
			}
			p.cancel()
			if err := p.wait(); err != nil {
				t.Errorf("after cancel: got %v, want nil", err)
			}
		})
	}
}

// TestRemoteStdin_UsageErrors: stdin modes are exclusive and the exit-on-close variable
// takes only true/false (clap in the reference: exit 2).
func TestRemoteStdin_UsageErrors(t *testing.T) {
	tests := []struct {
		name string
		env  string // value of CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE, "-" for unset
		args []string
		want string
	}{
		{"bearer and credential", "-", []string{"--registration-bearer-stdin", "--executor-credential-stdin"},
			"--registration-bearer-stdin and --executor-credential-stdin cannot be used together"},
		{"credential and chatgpt", "-", []string{"--executor-credential-stdin", "--chatgpt-token-stdin"},
			"--executor-credential-stdin and --chatgpt-token-stdin cannot be used together"},
		{"bearer and chatgpt", "-", []string{"--registration-bearer-stdin", "--chatgpt-token-stdin"},
			"--registration-bearer-stdin and --chatgpt-token-stdin cannot be used together"},
		{"env 1", "1", nil, `invalid value "1" for '--exit-on-stdin-close'`},
		{"env empty", "", nil, `invalid value "" for '--exit-on-stdin-close'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env != "-" {
				t.Setenv("CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE", tt.env)
			}
			args := append([]string{"--registry", "http://127.0.0.1:1", "--environment-id", "env-1"}, tt.args...)
			err := runRemote(context.Background(), args, strings.NewReader(""), io.Discard, io.Discard)
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want a usage error containing %q", err, tt.want)
			}
		})
	}
}
