package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"

	"github.com/execlab/executor/internal/refbin"
	"github.com/execlab/executor/noise"
	"github.com/execlab/executor/relay/frame"
)

// registryFixture is a minimal environment registry (registry-auth.md §3, §4) plus a rendezvous
// websocket endpoint, both on 127.0.0.1. The test itself plays rendezvous and harness: every
// executor socket accepted on /rendezvous is handed to it through sockets.
type registryFixture struct {
	t              *testing.T
	envID          string
	registrationID string
	bearer         string

	registry   *httptest.Server
	rendezvous *httptest.Server
	sockets    chan acceptedSocket

	// mu guards the fields below; handlers run on server goroutines.
	mu          sync.Mutex
	registers   []registerCall
	validations []validateCall
	handlerErrs []string
}

type acceptedSocket struct {
	conn *websocket.Conn
	req  *http.Request
}

type registerCall struct {
	authorization string
	body          []byte
	executorKey   json.RawMessage
}

type validateCall struct {
	authorization string
	streamID      string
	body          []byte
	// Body members (registry-auth.md §4.1).
	registrationID string
	harnessKey     json.RawMessage
	authzText      string
}

const rendezvousQuery = "sig=interop-test-signature"

func newRegistryFixture(t *testing.T, envID, registrationID, bearer string) *registryFixture {
	fx := &registryFixture{
		t: t, envID: envID, registrationID: registrationID, bearer: bearer,
		sockets: make(chan acceptedSocket, 4),
	}
	fx.rendezvous = httptest.NewServer(http.HandlerFunc(fx.serveRendezvous))
	fx.registry = httptest.NewServer(http.HandlerFunc(fx.serveRegistry))
	t.Cleanup(func() {
		fx.registry.Close()
		fx.rendezvous.Close()
		for {
			select {
			case s := <-fx.sockets:
				s.conn.CloseNow()
			default:
				return
			}
		}
	})
	return fx
}

// rendezvousURL is the url the register response hands to the executor (ws://, with a sig
// query that the executor must use verbatim).
func (fx *registryFixture) rendezvousURL() string {
	return "ws" + strings.TrimPrefix(fx.rendezvous.URL, "http") + "/rendezvous?" + rendezvousQuery
}

func (fx *registryFixture) fail(format string, args ...any) {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	fx.handlerErrs = append(fx.handlerErrs, fmt.Sprintf(format, args...))
}

// checkHandlers reports errors seen by the HTTP handlers (they must not call t.Fatal).
func (fx *registryFixture) checkHandlers() {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	for _, e := range fx.handlerErrs {
		fx.t.Errorf("fixture: %s", e)
	}
	fx.handlerErrs = nil
}

func (fx *registryFixture) serveRegistry(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		fx.fail("reading %s body: %v", r.URL.Path, err)
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	prefix := "/cloud/environment/" + fx.envID + "/"
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, prefix) {
		fx.fail("unexpected registry request %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	if got, want := r.Header.Get("Authorization"), "Bearer "+fx.bearer; got != want {
		fx.fail("%s: authorization header does not carry the stdin bearer", r.URL.Path)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	switch strings.TrimPrefix(r.URL.Path, prefix) {
	case "register":
		var req struct {
			SecurityProfile   string          `json:"security_profile"`
			ExecutorPublicKey json.RawMessage `json:"executor_public_key"`
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil || req.SecurityProfile != "noise_hybrid_ik_v1" {
			fx.fail("register body is not {security_profile: noise_hybrid_ik_v1, executor_public_key}: %v", err)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		fx.mu.Lock()
		fx.registers = append(fx.registers, registerCall{
			authorization: r.Header.Get("Authorization"), body: body, executorKey: req.ExecutorPublicKey,
		})
		fx.mu.Unlock()
		writeJSON(w, map[string]string{
			"environment_id":           fx.envID,
			"url":                      fx.rendezvousURL(),
			"security_profile":         "noise_hybrid_ik_v1",
			"executor_registration_id": fx.registrationID,
		})
	case "validate":
		var req struct {
			RegistrationID string          `json:"executor_registration_id"`
			HarnessKey     json.RawMessage `json:"harness_public_key"`
			Authorization  string          `json:"harness_key_authorization"`
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			fx.fail("validate body: %v", err)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		fx.mu.Lock()
		fx.validations = append(fx.validations, validateCall{
			authorization: r.Header.Get("Authorization"), streamID: r.Header.Get("X-Codex-Noise-Stream-Id"),
			body: body, registrationID: req.RegistrationID, harnessKey: req.HarnessKey, authzText: req.Authorization,
		})
		fx.mu.Unlock()
		writeJSON(w, map[string]bool{"valid": true})
	default:
		fx.fail("unexpected registry path %s", r.URL.Path)
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (fx *registryFixture) serveRendezvous(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/rendezvous" || r.URL.RawQuery != rendezvousQuery {
		fx.fail("executor dialed %s, not the registered url verbatim", r.URL.Path)
		http.NotFound(w, r)
		return
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		fx.fail("accepting rendezvous websocket: %v", err)
		return
	}
	c.SetReadLimit(frame.MaxMessageSize)
	select {
	case fx.sockets <- acceptedSocket{conn: c, req: r.Clone(context.Background())}:
	default:
		c.CloseNow() // the test takes only the first few sockets
	}
}

// nextSocket waits for the executor's next rendezvous socket.
func (fx *registryFixture) nextSocket(ctx context.Context) acceptedSocket {
	fx.t.Helper()
	select {
	case s := <-fx.sockets:
		return s
	case <-ctx.Done():
		fx.t.Fatalf("waiting for the executor's rendezvous socket: %v", ctx.Err())
		return acceptedSocket{}
	}
}

func (fx *registryFixture) registerCalls() []registerCall {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return append([]registerCall(nil), fx.registers...)
}

func (fx *registryFixture) validateCalls() []validateCall {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return append([]validateCall(nil), fx.validations...)
}

// referenceExecutor is a running `codex exec-server --remote …` process.
type referenceExecutor struct {
	stderr *lockedBuffer // its stdout and stderr
}

// startReferenceExecutor starts reference release r in remote mode against fx, with the
// bearer on stdin (registry-auth.md §11.1 row 1a) and a fresh CODEX_HOME under /var/tmp.
func startReferenceExecutor(t *testing.T, r refbin.Release, fx *registryFixture) *referenceExecutor {
	out := &lockedBuffer{}
	startReference(t, exec.Command(r.Path, "exec-server", "--remote", fx.registry.URL,
		"--environment-id", fx.envID, "--registration-bearer-stdin"), fx.bearer, out)
	return &referenceExecutor{stderr: out}
}

// startReference starts cmd (a reference release) with HOME and CODEX_HOME a fresh dir
// under /var/tmp, the bearer as one line on stdin (kept open: EOF does not stop the process
// anyway), its output also copied to out when non-nil. The process is stopped (SIGTERM,
// then SIGKILL after 5 s, an error when it ignored SIGTERM) in Cleanup and its output logged
// on failure.
func startReference(t *testing.T, cmd *exec.Cmd, bearer string, out io.Writer) *refbin.Proc {
	t.Helper()
	home := refbin.CodexHome(t)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "CODEX_HOME=" + home,
		"RUST_LOG=" + envOr("EXECUTOR_INTEROP_RUST_LOG", "warn")}
	return refbin.Launch(t, cmd, &refbin.LaunchOptions{NoLine: true, Stdin: bearer + "\n", Tee: out,
		Exit: refbin.ExitOnSIGTERM, Name: "reference executor"})
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// lockedBuffer collects process output written from exec's copying goroutines and lets the test
// wait for a substring without polling.
type lockedBuffer struct {
	mu      sync.Mutex // guards buf and changed: written by exec's goroutine, read by the test
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced on every Write
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
	return b.buf.Write(p)
}

// waitFor blocks until the output contains s (ANSI colour codes removed) or ctx is done.
func (b *lockedBuffer) waitFor(ctx context.Context, s string) error {
	for {
		b.mu.Lock()
		found := strings.Contains(ansiEscape.ReplaceAllString(b.buf.String(), ""), s)
		if b.changed == nil {
			b.changed = make(chan struct{})
		}
		ch := b.changed
		b.mu.Unlock()
		if found {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// openStream takes the executor's key from its one register call (made before it dialed
// the rendezvous), and opens a stream on sock as a fresh harness identity: the resume
// frame, after which (spec §4.1) the caller sends handshake message 1 without waiting.
func (fx *registryFixture) openStream(ctx context.Context, t *testing.T, sock acceptedSocket) (executorKey noise.PublicKey, harness *noise.Identity, streamID string, rc *wsRecordConn) {
	t.Helper()
	regs := fx.registerCalls()
	if len(regs) != 1 {
		t.Fatalf("got %d register calls before the rendezvous dial, want 1", len(regs))
	}
	executorKey, err := noise.ParsePublicKeyJSON(regs[0].executorKey)
	if err != nil {
		t.Fatalf("parsing executor_public_key from the register body: %v", err)
	}
	if harness, err = noise.GenerateIdentity(nil); err != nil {
		t.Fatal(err)
	}
	streamID = newUUID(t)
	rc = newWSRecordConn(sock.conn, streamID)
	if err := rc.writeFrame(ctx, &frame.Frame{Version: frame.Version, StreamID: streamID, Body: &frame.Resume{}}); err != nil {
		t.Fatal(err)
	}
	return executorKey, harness, streamID, rc
}
