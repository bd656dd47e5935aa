package interop_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/internal/refbin"
	"github.com/execlab/executor/noise"
	"github.com/execlab/executor/noise/channel"
	"github.com/execlab/executor/relay/frame"
)

const (
	interopEnvID          = "env-interop"
	interopRegistrationID = "reg-interop-1"
	interopBearer         = "interop-registration-bearer"
	interopAuthorization  = "interop-harness-key-authorization"

	// msg2Len is the size of message 2 with an empty payload (spec/relay-noise.md §5.7).
	msg2Len = 3424
	// msg2FrameLen and resetFrameLen are the observed frame sizes with a 36-byte stream id
	// (spec/relay-noise.md §2.2).
	msg2FrameLen  = 3470
	resetFrameLen = 70
)

// TestNoiseRelay_GoHarnessAgainstReferenceExecutor is interop_handshake_order and the relay
// golden-vector proof: the released executor registers with an in-test registry, dials an
// in-test rendezvous, and this test — acting as rendezvous and harness with relay/frame and
// noise/channel — completes the hybrid IK handshake (message 2 read as ekem, skem, e, ee, se),
// runs initialize → initialized → process/start of `echo interop` and reads its output. Frames
// written by the binary must decode and re-encode byte-identically with relay/frame. Runs
// against each reference release; golden frames are written from the newest.
func TestNoiseRelay_GoHarnessAgainstReferenceExecutor(t *testing.T) {
	refbin.ForEachRelease(t, testNoiseRelay)
}

func testNoiseRelay(t *testing.T, r refbin.Release) {
	fx := newRegistryFixture(t, interopEnvID, interopRegistrationID, interopBearer)
	startReferenceExecutor(t, r, fx)
	defer fx.checkHandlers()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	sock := fx.nextSocket(ctx)
	defer sock.conn.CloseNow()
	checkUpgradeRequest(t, sock)

	executorKey, harness, streamID, rc := fx.openStream(ctx, t, sock)
	conn, err := channel.Initiator(ctx, rc, &channel.InitiatorConfig{
		Static:          harness,
		ResponderStatic: executorKey,
		Prologue:        noise.AppendPrologue(nil, interopEnvID, interopRegistrationID, streamID),
		Authorization:   []byte(interopAuthorization),
	})
	if err != nil {
		t.Fatalf("Noise handshake with the reference executor: %v", err)
	}
	defer conn.Close()

	checkMessage2Frame(t, rc, streamID)
	checkValidateCall(t, fx, harness, streamID)

	rpc := &rpcClient{t: t, conn: conn}
	initRes := rpc.call(ctx, "initialize", `{"clientName":"executor-interop","resumeSessionId":null}`)
	var init struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(initRes, &init); err != nil || init.SessionID == "" {
		t.Fatalf("initialize result %s: want a sessionId (err %v)", initRes, err)
	}
	rpc.notify(ctx, "initialized", `{}`)
	startRes := rpc.call(ctx, "process/start",
		`{"processId":"interop-1","argv":["echo","interop"],"cwd":"file:///tmp","env":{"PATH":"/usr/bin:/bin"},"tty":false}`)
	var start struct {
		ProcessID   string `json:"processId"`
		SandboxType string `json:"sandboxType"`
	}
	if err := json.Unmarshal(startRes, &start); err != nil || start.ProcessID != "interop-1" {
		t.Fatalf("process/start result %s: want processId interop-1 (err %v)", startRes, err)
	}
	if got := rpc.outputUntil(ctx, "interop-1", "interop\n"); got != "interop\n" {
		t.Errorf("process output: got %q, want %q", got, "interop\n")
	}

	checkLargeMessages(ctx, t, rpc)

	frames := rc.rawFrames()
	checkRoundTrip(t, frames)
	checkFullRecordFrame(t, frames)
	reset := checkUnknownStreamReset(ctx, t, rc)
	if dir := os.Getenv("EXECUTOR_INTEROP_GOLDEN_DIR"); dir != "" && !t.Failed() && r.Version == refbin.Newest {
		writeGolden(t, dir, frames, reset)
	}
}

// writeGolden stores frames written by the binary as relay/frame golden vectors
// (relay/frame/testdata/reference/regen.sh sets EXECUTOR_INTEROP_GOLDEN_DIR).
func writeGolden(t *testing.T, dir string, frames []rawFrame, reset []byte) {
	t.Helper()
	old, _ := filepath.Glob(filepath.Join(dir, "*.bin"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	write := func(i int, kind frame.Kind, b []byte) {
		name := filepath.Join(dir, fmt.Sprintf("%02d-%s-%d.bin", i, kind, len(b)))
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Keep the repository small: every frame under 8 KiB plus the first full-record frame.
	full := false
	for i, rf := range frames {
		isFull := len(rf.bytes) == 61508
		if len(rf.bytes) < 8<<10 || (isFull && !full) {
			write(i, frame.KindOf(rf.frame.Body), rf.bytes)
		}
		full = full || isFull
	}
	write(len(frames), frame.KindReset, reset)
	t.Logf("wrote golden frames to %s", dir)
}

// largeFileLen makes both fs/writeFile's request and fs/readFile's response span several
// 61440-byte records (base64 inflates by 4/3).
const largeFileLen = 200 << 10

// checkLargeMessages moves a JSON-RPC message of several records each way: fs/writeFile (our
// channel splits, the reference reassembles) and fs/readFile (the reference splits into full
// 61440-byte records, we reassemble).
func checkLargeMessages(ctx context.Context, t *testing.T, rpc *rpcClient) {
	t.Helper()
	content := make([]byte, largeFileLen)
	if _, err := rand.Read(content); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "large.bin")
	uri := "file://" + path
	b64 := base64.StdEncoding.EncodeToString(content)
	rpc.call(ctx, "fs/writeFile", fmt.Sprintf(`{"path":%q,"dataBase64":%q}`, uri, b64))
	onDisk, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(onDisk, content) {
		t.Fatalf("fs/writeFile through the channel: file has %d bytes (err %v), want the %d bytes sent", len(onDisk), err, len(content))
	}
	res := rpc.call(ctx, "fs/readFile", fmt.Sprintf(`{"path":%q}`, uri))
	var read struct {
		DataBase64 string `json:"dataBase64"`
	}
	if err := json.Unmarshal(res, &read); err != nil {
		t.Fatalf("fs/readFile result: %v", err)
	}
	if got, err := base64.StdEncoding.DecodeString(read.DataBase64); err != nil || !bytes.Equal(got, content) {
		t.Errorf("fs/readFile through the channel: got %d bytes (err %v), want the %d bytes written", len(got), err, len(content))
	}
}

// checkFullRecordFrame: a data frame carrying a full record (61440 plaintext bytes + 16-byte
// tag) is 61508 bytes with a 36-byte stream id (spec §2.2).
func checkFullRecordFrame(t *testing.T, frames []rawFrame) {
	t.Helper()
	const fullRecordFrameLen = 61508
	for _, rf := range frames {
		if d, ok := rf.frame.Body.(*frame.Data); ok && len(d.Payload) == 61440+16 {
			if len(rf.bytes) != fullRecordFrameLen {
				t.Errorf("full-record data frame: got %d bytes, want %d", len(rf.bytes), fullRecordFrameLen)
			}
			return
		}
	}
	t.Errorf("no full-record data frame among %d frames from the binary", len(frames))
}

// checkUpgradeRequest: the rendezvous dial carries no authorization and a fresh request id
// (registry-auth.md §10, §8.2).
func checkUpgradeRequest(t *testing.T, s acceptedSocket) {
	t.Helper()
	if v := s.req.Header.Get("Authorization"); v != "" {
		t.Errorf("rendezvous upgrade carries an authorization header, want none")
	}
	if v := s.req.Header.Get("X-Request-Id"); !regexp.MustCompile(`^req_[0-9a-f]{32}$`).MatchString(v) {
		t.Errorf("rendezvous upgrade x-request-id: got %q, want req_<32 lowercase hex>", v)
	}
}

// checkMessage2Frame pins the executor's handshake frame: message 2 is 3424 bytes, the frame
// 3470, and it re-encodes byte-identically.
func checkMessage2Frame(t *testing.T, rc *wsRecordConn, streamID string) {
	t.Helper()
	for _, rf := range rc.rawFrames() {
		hs, ok := rf.frame.Body.(*frame.Handshake)
		if !ok || rf.frame.StreamID != streamID {
			continue
		}
		if len(hs.Payload) != msg2Len {
			t.Errorf("message 2: got %d bytes, want %d", len(hs.Payload), msg2Len)
		}
		if len(rf.bytes) != msg2FrameLen {
			t.Errorf("message 2 frame: got %d bytes, want %d", len(rf.bytes), msg2FrameLen)
		}
		reenc, err := frame.Encode(nil, &rf.frame)
		if err != nil {
			t.Fatalf("re-encoding message 2 frame: %v", err)
		}
		if !bytes.Equal(reenc, rf.bytes) {
			t.Errorf("message 2 frame does not round-trip: got %x…, want %x…", head(reenc), head(rf.bytes))
		}
		return
	}
	t.Fatalf("no handshake frame for stream %s among %d frames read", streamID, len(rc.rawFrames()))
}

// checkValidateCall: the executor validated our key with the authorization from message 1.
func checkValidateCall(t *testing.T, fx *registryFixture, harness *noise.Identity, streamID string) {
	t.Helper()
	calls := fx.validateCalls()
	if len(calls) != 1 {
		t.Fatalf("got %d validate calls, want 1", len(calls))
	}
	c := calls[0]
	if c.streamID != streamID {
		t.Errorf("validate x-codex-noise-stream-id: got %q, want %q", c.streamID, streamID)
	}
	if c.registrationID != interopRegistrationID {
		t.Errorf("validate executor_registration_id: got %q, want %q", c.registrationID, interopRegistrationID)
	}
	if c.authzText != interopAuthorization {
		t.Errorf("validate harness_key_authorization: got %d bytes, want the %d-byte message-1 payload", len(c.authzText), len(interopAuthorization))
	}
	pub := harness.Public()
	if want := pub.AppendJSON(nil); !bytes.Equal(c.harnessKey, want) {
		t.Errorf("validate harness_public_key differs from our key JSON (got %d bytes, want %d)", len(c.harnessKey), len(want))
	}
}

// checkRoundTrip: every frame the binary sent decodes and re-encodes byte-identically.
func checkRoundTrip(t *testing.T, frames []rawFrame) {
	t.Helper()
	kinds := map[frame.Kind]int{}
	for i, rf := range frames {
		kinds[frame.KindOf(rf.frame.Body)]++
		reenc, err := frame.Encode(nil, &rf.frame)
		if err != nil {
			t.Errorf("frame %d (%s): re-encoding: %v", i, frame.KindOf(rf.frame.Body), err)
			continue
		}
		if !bytes.Equal(reenc, rf.bytes) {
			t.Errorf("frame %d (%s): got %x…, want %x…", i, frame.KindOf(rf.frame.Body), head(reenc), head(rf.bytes))
		}
	}
	t.Logf("%d frames from the binary round-tripped byte-identically: %v", len(frames), kinds)
	if kinds[frame.KindHandshake] != 1 || kinds[frame.KindData] < 4 {
		t.Errorf("frames from the binary: got %v, want 1 handshake and at least 4 data", kinds)
	}
}

// checkUnknownStreamReset: data on a stream the executor does not know is answered with a reset
// (spec §12.1), whose bytes equal relay/frame's encoding of Reset{noise_relay_protocol_error}.
func checkUnknownStreamReset(ctx context.Context, t *testing.T, rc *wsRecordConn) []byte {
	t.Helper()
	other := newUUID(t)
	err := rc.writeFrame(ctx, &frame.Frame{Version: frame.Version, StreamID: other,
		Body: &frame.Data{SegmentCount: frame.DataSegmentCount, Payload: []byte{1, 2, 3}}})
	if err != nil {
		t.Fatal(err)
	}
	want, err := frame.Encode(nil, &frame.Frame{Version: frame.Version, StreamID: other,
		Body: &frame.Reset{Reason: frame.ResetReasonProtocolError}})
	if err != nil {
		t.Fatal(err)
	}
	for {
		typ, b, err := rc.ws.Read(ctx)
		if err != nil {
			t.Fatalf("waiting for the reset of an unknown stream: %v", err)
		}
		var f frame.Frame
		if typ != websocket.MessageBinary || frame.Decode(&f, b) != nil || f.StreamID != other {
			continue // late frames of the live stream
		}
		if !bytes.Equal(b, want) {
			t.Errorf("reset of unknown stream: got %x, want %x", b, want)
		}
		if len(b) != resetFrameLen {
			t.Errorf("reset frame: got %d bytes, want %d", len(b), resetFrameLen)
		}
		return b
	}
}

func head(b []byte) []byte {
	if len(b) > 48 {
		return b[:48]
	}
	return b
}

// newUUID returns a random UUIDv4 in canonical text form (36 bytes), as harnesses use.
func newUUID(t *testing.T) string {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		t.Fatal(err)
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// rpcClient speaks Codex JSON-RPC (no "jsonrpc" member) over a noise/channel Conn.
type rpcClient struct {
	t      *testing.T
	conn   *channel.Conn
	nextID int
	// pending holds notifications read while waiting for a response.
	pending []rpcMessage
}

type rpcMessage struct {
	ID     *int            `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func (c *rpcClient) write(ctx context.Context, msg string) {
	c.t.Helper()
	if err := c.conn.WriteMessage(ctx, []byte(msg)); err != nil {
		c.t.Fatalf("writing JSON-RPC message: %v", err)
	}
}

func (c *rpcClient) read(ctx context.Context) rpcMessage {
	c.t.Helper()
	b, err := c.conn.ReadMessage(ctx)
	if err != nil {
		c.t.Fatalf("reading JSON-RPC message: %v", err)
	}
	var m rpcMessage
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("decoding JSON-RPC message %q: %v", b, err)
	}
	return m
}

// call sends a request and returns its result, keeping notifications that arrive first.
func (c *rpcClient) call(ctx context.Context, method, params string) json.RawMessage {
	c.t.Helper()
	c.nextID++
	id := c.nextID
	c.write(ctx, fmt.Sprintf(`{"id":%d,"method":%q,"params":%s}`, id, method, params))
	for {
		m := c.read(ctx)
		if m.ID == nil || m.Method != "" {
			c.pending = append(c.pending, m)
			continue
		}
		if *m.ID != id {
			c.t.Fatalf("%s: got response id %d, want %d", method, *m.ID, id)
		}
		if len(m.Error) != 0 && string(m.Error) != "null" {
			c.t.Fatalf("%s: got error %s", method, m.Error)
		}
		return m.Result
	}
}

func (c *rpcClient) notify(ctx context.Context, method, params string) {
	c.t.Helper()
	c.write(ctx, fmt.Sprintf(`{"method":%q,"params":%s}`, method, params))
}

// outputUntil collects process/output chunks of processID until they contain want or the
// process closes, and returns the collected output.
func (c *rpcClient) outputUntil(ctx context.Context, processID, want string) string {
	c.t.Helper()
	var out strings.Builder
	for {
		var m rpcMessage
		if len(c.pending) > 0 {
			m, c.pending = c.pending[0], c.pending[1:]
		} else {
			m = c.read(ctx)
		}
		var p struct {
			ProcessID string `json:"processId"`
			Chunk     string `json:"chunk"`
		}
		if m.Method != "process/output" && m.Method != "process/closed" {
			continue
		}
		if err := json.Unmarshal(m.Params, &p); err != nil || p.ProcessID != processID {
			continue
		}
		if m.Method == "process/closed" {
			return out.String()
		}
		chunk, err := base64.StdEncoding.DecodeString(p.Chunk)
		if err != nil {
			c.t.Fatalf("process/output chunk is not base64: %v", err)
		}
		out.Write(chunk)
		if strings.Contains(out.String(), want) {
			return out.String()
		}
	}
}
