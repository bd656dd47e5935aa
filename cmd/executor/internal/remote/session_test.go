package remote_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
	"github.com/execlab/executor/internal/syncbuf"
	"github.com/execlab/executor/noise"
	"github.com/execlab/executor/relay/frame"
)

// outputLog collects process output per process and seq, from notifications and process/read
// alike (both may deliver the same chunk after a resume; they may also interleave).
type outputLog struct {
	mu      sync.Mutex // guards chunks, changed
	chunks  map[string]map[uint64][]byte
	changed chan struct{}
}

func newOutputLog() *outputLog {
	return &outputLog{chunks: map[string]map[uint64][]byte{}, changed: make(chan struct{})}
}

func (o *outputLog) add(pid string, seq uint64, b []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.chunks[pid] == nil {
		o.chunks[pid] = map[uint64][]byte{}
	}
	if _, dup := o.chunks[pid][seq]; dup {
		return
	}
	o.chunks[pid][seq] = append([]byte(nil), b...)
	close(o.changed)
	o.changed = make(chan struct{})
}

func (o *outputLog) onNotification(n harness.Notification) {
	if n.Method != protocol.MethodProcessOutput {
		return
	}
	out, err := n.ProcessOutput()
	if err != nil {
		return
	}
	o.add(out.ProcessID, out.Seq, out.Chunk)
}

// waitFor blocks until pid's contiguous output contains s.
func (o *outputLog) waitFor(ctx context.Context, pid, s string) error {
	for {
		got, _ := o.get(pid)
		o.mu.Lock()
		ch := o.changed
		o.mu.Unlock()
		if strings.Contains(got, s) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %q in %s output: %w", s, pid, ctx.Err())
		}
	}
}

// get returns the output of the contiguous seq prefix (from the first seq, 0 or 1) and the
// last seq of that prefix.
func (o *outputLog) get(pid string) (string, uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	m := o.chunks[pid]
	var b strings.Builder
	seq := uint64(0)
	if _, ok := m[0]; !ok {
		seq = 1
	}
	last := uint64(0)
	for ; ; seq++ {
		c, ok := m[seq]
		if !ok {
			break
		}
		b.Write(c)
		last = seq
	}
	return b.String(), last
}

// TestRemote_FullSession_ResumeAndRedaction is the end-to-end proof over loopback: Go harness
// → in-test rendezvous → remote.Run → process/start, output, process/write; the rendezvous
// socket is cut mid-output, the executor redials, the harness opens a new stream, resumes the
// session and catches up with process/read: no byte lost. All log output (debug level) is
// captured and must not contain any secret, sig= query, authorization, plaintext or peer reset
// reason.
func TestRemote_FullSession_ResumeAndRedaction(t *testing.T) {
	fx := newFixture(t)
	logs := &syncbuf.Buffer{}
	runExecutor(t, fx, logs, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	sock := fx.nextSocket(ctx)
	up := fx.upgradeRequests()[0]
	if got := up.URL.RawQuery; got != testSig {
		t.Errorf("upgrade query: got %q, want %q (verbatim)", got, testSig)
	}
	if !regexp.MustCompile(`^req_[0-9a-f]{32}$`).MatchString(up.Header.Get("X-Request-Id")) {
		t.Errorf("x-request-id: got %q, want req_<32 hex>", up.Header.Get("X-Request-Id"))
	}
	if up.Header.Get("Authorization") != "" || up.Header.Get("Origin") != "" {
		t.Errorf("upgrade carries authorization or origin")
	}

	harnessID, err := noise.GenerateIdentity(nil)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := fx.handshake(ctx, t, sock, "stream-1", harnessID)
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	out := newOutputLog()
	cl := harness.Open(conn, &harness.Options{OnNotification: out.onNotification})
	init, err := cl.Initialize(ctx, testSession, "")
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	checkValidate(t, fx, harnessID, "stream-1")

	cwd := protocol.FromNative(t.TempDir())
	env := map[string]string{"PATH": "/usr/bin:/bin"}
	if _, err := cl.StartProcess(ctx, protocol.ProcessStartParams{ProcessID: "cat", Argv: []string{"cat"},
		Cwd: cwd, Env: env, PipeStdin: true}); err != nil {
		t.Fatalf("process/start cat: %v", err)
	}
	if st, err := cl.WriteProcess(ctx, "cat", "w1", []byte("SECRET-PLAINTEXT-stdin\n")); err != nil || st != protocol.WriteStatus("accepted") {
		t.Fatalf("process/write: status %q, err %v", st, err)
	}
	if err := out.waitFor(ctx, "cat", "SECRET-PLAINTEXT-stdin\n"); err != nil {
		t.Fatal(err)
	}

	const lines = 300
	script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do echo SECRET-PLAINTEXT-line-$i; i=$((i+1)); sleep 0.002; done`, lines)
	if _, err := cl.StartProcess(ctx, protocol.ProcessStartParams{ProcessID: "gen", Argv: []string{"sh", "-c", script},
		Cwd: cwd, Env: env}); err != nil {
		t.Fatalf("process/start gen: %v", err)
	}
	if err := out.waitFor(ctx, "gen", "SECRET-PLAINTEXT-line-20\n"); err != nil {
		t.Fatal(err)
	}
	// A peer reset with a secret reason on an unrelated stream must not be logged.
	_ = sock.send(ctx, frame.Frame{StreamID: "other", Body: &frame.Reset{Reason: "SECRET-RESET-REASON"}})

	// Cut the rendezvous socket mid-output.
	sock.close()
	cl.Close()

	sock2 := fx.nextSocket(ctx)
	conn2, err := fx.handshake(ctx, t, sock2, "stream-2", harnessID)
	if err != nil {
		t.Fatalf("handshake after reconnect: %v", err)
	}
	cl2 := harness.Open(conn2, &harness.Options{OnNotification: out.onNotification})
	defer cl2.Close()
	init2, err := cl2.Initialize(ctx, testSession, init.SessionID)
	if err != nil {
		t.Fatalf("initialize resume: %v", err)
	}
	if init2.SessionID != init.SessionID {
		t.Errorf("resumed session id: got %q, want %q", init2.SessionID, init.SessionID)
	}
	// Catch up from the last seq seen before the cut until the process has closed.
	for {
		_, last := out.get("gen")
		wait := uint64(200)
		res, err := cl2.ReadProcess(ctx, protocol.ProcessReadParams{ProcessID: "gen", AfterSeq: &last, WaitMs: &wait})
		if err != nil {
			t.Fatalf("process/read: %v", err)
		}
		for _, c := range res.Chunks {
			out.add("gen", c.Seq, c.Chunk)
		}
		if res.Closed {
			break
		}
	}
	got, _ := out.get("gen")
	var want strings.Builder
	for i := range lines {
		fmt.Fprintf(&want, "SECRET-PLAINTEXT-line-%d\n", i)
	}
	if got != want.String() {
		t.Errorf("output across the cut: got %d bytes, want %d (lost or duplicated bytes)", len(got), want.Len())
	}
	if n := len(fx.registerCalls()); n != 1 {
		t.Errorf("register calls: got %d, want 1 (a socket end redials the same url)", n)
	}

	cl2.Close()
	checkRedaction(t, logs.String())
}

func checkValidate(t *testing.T, fx *fixture, harnessID *noise.Identity, streamID string) {
	t.Helper()
	vs := fx.validateCalls()
	if len(vs) == 0 {
		t.Fatal("no validate call")
	}
	v := vs[len(vs)-1]
	if got := v.header.Get("X-Codex-Noise-Stream-Id"); got != streamID {
		t.Errorf("x-codex-noise-stream-id: got %q, want %q", got, streamID)
	}
	if got := v.header.Get("Authorization"); got != "Bearer "+testBearer {
		t.Errorf("validate authorization header is not the bearer")
	}
	pub := harnessID.Public()
	want := fmt.Sprintf(`{"executor_registration_id":%q,"harness_public_key":%s,"harness_key_authorization":%q}`,
		testRegID, pub.AppendJSON(nil), testAuthz)
	if string(v.body) != want {
		t.Errorf("validate body:\ngot  %s\nwant %s", v.body, want)
	}
}

// checkRedaction asserts the spec §14 never-log list against captured logs.
func checkRedaction(t *testing.T, logs string) {
	t.Helper()
	if !strings.Contains(logs, "noise_event=registration") || !strings.Contains(logs, "noise_event=rendezvous_connection") {
		t.Errorf("logs lack the registration/rendezvous events; captured:\n%s", logs)
	}
	for _, secret := range []string{testBearer, "SECRET-SIG", "sig=", testAuthz, "SECRET-PLAINTEXT", "SECRET-RESET-REASON",
		"authorization=", "Bearer"} {
		if strings.Contains(logs, secret) {
			t.Errorf("logs contain %q", secret)
		}
	}
	if m := regexp.MustCompile(`[A-Za-z0-9+/=_-]{120,}`).FindString(logs); m != "" {
		t.Errorf("logs contain a long opaque blob (key, ciphertext or token?): %.40s…", m)
	}
}
