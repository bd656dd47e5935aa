package jsonrpc_test

// Live reference exec-servers for differential tests: one per release, each started once
// per test binary on first use, spoken to over a loopback WebSocket.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/internal/refbin"
)

// refServer is one running `codex exec-server --listen ws://127.0.0.1:0`.
type refServer struct {
	url  string
	proc *refbin.Proc
	home string
}

var (
	// refMu guards refSrvs and refErrs: tests of a package may run in parallel, and
	// TestMain stops the servers after them.
	refMu   sync.Mutex
	refSrvs = map[string]*refServer{} // by release version
	refErrs = map[string]error{}      // a failed start is not retried
)

// reference returns the shared server of release r, starting it on first use. The
// servers are stopped by TestMain (stopReferences).
func reference(t *testing.T, r refbin.Release) *refServer {
	t.Helper()
	refMu.Lock()
	defer refMu.Unlock()
	if s := refSrvs[r.Version]; s != nil {
		return s
	}
	if err := refErrs[r.Version]; err != nil {
		t.Fatalf("starting reference %s: %v", r.Version, err)
	}
	s, err := startReference(r.Path)
	if err != nil {
		refErrs[r.Version] = err
		t.Fatalf("starting reference %s: %v", r.Version, err)
	}
	refSrvs[r.Version] = s
	return s
}

// stopReferences stops every server reference started.
func stopReferences() {
	refMu.Lock()
	defer refMu.Unlock()
	for v, s := range refSrvs {
		s.stop()
		delete(refSrvs, v)
	}
}

func startReference(bin string) (*refServer, error) {
	// CODEX_HOME must live outside /tmp and $TMPDIR (scripts/install-reference.sh).
	home, err := os.MkdirTemp("/var/tmp", "jsonrpc-ref-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "exec-server", "--listen", "ws://127.0.0.1:0")
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "TMPDIR="+filepath.Join(home))
	killWithParent(cmd)
	p, err := refbin.StartProc(cmd, &refbin.LaunchOptions{Line: wsURL, LineTimeout: 20 * time.Second, Kill: true, Name: "reference"})
	if err != nil {
		os.RemoveAll(home)
		return nil, err
	}
	srv := &refServer{proc: p, home: home}
	if _, err := p.AwaitLine(); err != nil {
		srv.stop()
		return nil, err
	}
	srv.url = p.URL()
	return srv, nil
}

// wsURL is the line the reference prints when listening.
var wsURL = regexp.MustCompile(`^ws://\S+$`)

func (s *refServer) stop() {
	if s == nil {
		return
	}
	_ = s.proc.Stop()
	os.RemoveAll(s.home)
}

// refClient sends one message at a time and reads the reply, redialling after the
// server closes the connection (which it does for unexpected notifications and
// responses).
type refClient struct {
	t    *testing.T
	url  string
	conn *websocket.Conn
}

func (s *refServer) client(t *testing.T) *refClient {
	c := &refClient{t: t, url: s.url}
	t.Cleanup(func() {
		if c.conn != nil {
			c.conn.Close(websocket.StatusNormalClosure, "")
		}
	})
	return c
}

// refReply is the reference's answer to one message.
type refReply struct {
	closed  bool // the server closed the connection instead of replying
	id      json.RawMessage
	code    int
	message string
	result  json.RawMessage
}

func (c *refClient) send(msg []byte, binary bool) refReply {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if c.conn == nil {
		conn, _, err := websocket.Dial(ctx, c.url, nil)
		if err != nil {
			c.t.Fatalf("dialling reference: %v", err)
		}
		conn.SetReadLimit(-1)
		c.conn = conn
	}
	typ := websocket.MessageText
	if binary {
		typ = websocket.MessageBinary
	}
	if err := c.conn.Write(ctx, typ, msg); err != nil {
		c.conn = nil
		return refReply{closed: true}
	}
	_, data, err := c.conn.Read(ctx)
	if err != nil {
		c.conn.CloseNow()
		c.conn = nil
		return refReply{closed: true}
	}
	var env struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		c.t.Fatalf("reference sent undecodable reply %q: %v", data, err)
	}
	rep := refReply{id: env.ID, result: env.Result}
	if env.Error != nil {
		rep.code, rep.message = env.Error.Code, env.Error.Message
	}
	return rep
}

const refParsePrefix = "failed to parse websocket JSON-RPC message from exec-server websocket "

// parseDetail returns the decoder detail if rep reports a malformed message.
func (rep refReply) parseDetail() (string, bool) {
	if rep.closed || rep.code != -32600 || string(rep.id) != "-1" || !strings.HasPrefix(rep.message, refParsePrefix) {
		return "", false
	}
	rest := rep.message[len(refParsePrefix):] // "127.0.0.1:PORT: detail"
	_, detail, ok := strings.Cut(rest, ": ")
	return detail, ok
}
