package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/execlab/executor/cmd/executor/internal/registrycmd"
	"github.com/execlab/executor/noise"
	"github.com/execlab/executor/registry/api"
	"github.com/execlab/executor/registry/server"
	"github.com/execlab/executor/relay/wsconn"
)

// registry_connect_sqlite, registry_connect_pg3: p50 latency of the registry's connect
// (R3: POST, authentication, registration + location lookup, authorization issued, bundle
// with a signed URL), in ms, on a single `registry serve` node on SQLite and on 3 nodes
// sharing one PostgreSQL database (issue 17). An executor socket is attached to node 0; on
// 3 nodes the connects rotate over all of them, so two thirds locate the executor on
// another node through the store. Each sample is the median of registryConnectsPerSample
// sequential connects over one keep-alive HTTP client; every issued authorization is then
// consumed by validate (untimed), so the per-token bound of outstanding authorizations is
// never reached. The PostgreSQL row needs EXECUTOR_BENCH_POSTGRES_DSN (or
// EXECUTOR_TEST_POSTGRES_DSN); without one it is skipped with that reason. No reference column.

// registryConnectsPerSample is the connects per sample (a quarter with --quick).
const registryConnectsPerSample = 200

func measureRegistryConnectSQLite(ctx context.Context, e *Env, _ *Side) (float64, error) {
	c, err := startConnectCluster(ctx, 1, "")
	if err != nil {
		return 0, err
	}
	defer c.close()
	return c.sample(ctx, e)
}

func measureRegistryConnectPG3(ctx context.Context, e *Env, _ *Side) (float64, error) {
	dsn := os.Getenv("EXECUTOR_BENCH_POSTGRES_DSN")
	if dsn == "" {
		dsn = os.Getenv("EXECUTOR_TEST_POSTGRES_DSN")
	}
	if dsn == "" {
		return 0, missing("registry_connect_pg3 needs EXECUTOR_BENCH_POSTGRES_DSN (a PostgreSQL database it may write to)")
	}
	c, err := startConnectCluster(ctx, 3, dsn)
	if err != nil {
		return 0, err
	}
	defer c.close()
	return c.sample(ctx, e)
}

// connectCluster is n registry nodes on one store with one executor socket attached to
// node 0, and a client for connect and validate.
type connectCluster struct {
	nodes  []*registrycmd.Service
	token  string // never logged
	env    string
	regID  string
	exec   *wsconn.Conn
	client *http.Client
}

// startConnectCluster starts n nodes on dsn ("" = a fresh SQLite file, for n = 1).
func startConnectCluster(ctx context.Context, n int, dsn string) (_ *connectCluster, err error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:6])
	c := &connectCluster{token: "tok_" + hex.EncodeToString(b[:]), env: "bench-connect-" + id,
		client: &http.Client{Timeout: callTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	tokens, err := server.ParseTokens(strings.NewReader(c.token + "\n"))
	if err != nil {
		return nil, err
	}
	var dir string
	if dsn == "" {
		if dir, err = os.MkdirTemp("", "executor-bench-registry-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir) // SQLite keeps the file open; removed once the nodes close
		dsn = dir + "/registry.db"
	}
	var public string
	for i := range n {
		addr, err := freeLoopbackAddr()
		if err != nil {
			return nil, err
		}
		if i == 0 {
			public = "http://" + addr
		}
		svc, err := registrycmd.Start(ctx, registrycmd.Config{Listen: addr, PublicURL: public, AdvertiseURL: "http://" + addr,
			NodeID: fmt.Sprintf("bench-%s-%d", id, i), DB: dsn, Tokens: tokens})
		if err != nil {
			return nil, fmt.Errorf("starting registry node %d: %w", i, err)
		}
		c.nodes = append(c.nodes, svc)
	}
	var reg api.RegisterResponse
	if err := c.post(ctx, c.nodes[0].URL, api.RegisterSuffix, api.RegisterRequest{SecurityProfile: api.SecurityProfile,
		ExecutorPublicKey: randomKeyJSON()}, &reg); err != nil {
		return nil, fmt.Errorf("registering: %w", err)
	}
	c.regID = reg.ExecutorRegistrationID
	if c.exec, err = wsconn.Dial(ctx, reg.URL, nil); err != nil {
		return nil, fmt.Errorf("attaching the executor socket: %w", err)
	}
	deadline := time.Now().Add(callTimeout)
	for {
		if _, ok := c.nodes[0].Hub.Online(c.env); ok {
			return c, nil
		}
		if time.Now().After(deadline) {
			return nil, errors.New("executor socket never attached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (c *connectCluster) sample(ctx context.Context, e *Env) (float64, error) {
	n := registryConnectsPerSample
	if e.Quick {
		n /= 4
	}
	key := randomKeyJSON()
	lat := make([]float64, 0, n)
	for i := range n {
		node := c.nodes[i%len(c.nodes)]
		var b api.ConnectResponse
		start := time.Now()
		if err := c.post(ctx, node.URL, api.ConnectSuffix, api.ConnectRequest{HarnessPublicKey: key}, &b); err != nil {
			return 0, fmt.Errorf("connect at node %d: %w", i%len(c.nodes), err)
		}
		lat = append(lat, float64(time.Since(start))/float64(time.Millisecond))
		if !strings.HasPrefix(b.URL, "ws://"+strings.TrimPrefix(c.nodes[0].URL, "http://")+"/") {
			return 0, fmt.Errorf("%w: connect at node %d sent the harness elsewhere than the executor's node", errDataLoss, i%len(c.nodes))
		}
		var v api.ValidateResponse
		if err := c.post(ctx, node.URL, api.ValidateSuffix, api.ValidateRequest{ExecutorRegistrationID: c.regID,
			HarnessPublicKey: key, HarnessKeyAuthorization: b.HarnessKeyAuthorization}, &v); err != nil || !v.Valid {
			return 0, fmt.Errorf("%w: validating the issued authorization: valid %v, %v", errDataLoss, v.Valid, err)
		}
	}
	sort.Float64s(lat)
	return median(lat), nil
}

// post sends one registry call and decodes a 200 answer into out.
func (c *connectCluster) post(ctx context.Context, base, suffix string, in, out any) error {
	body, _ := json.Marshal(in)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+api.Path(c.env, suffix), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	if suffix == api.ValidateSuffix {
		req.Header.Set(api.HeaderStreamID, "bench")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

func (c *connectCluster) close() {
	if c.exec != nil {
		c.exec.Close()
	}
	for _, n := range c.nodes {
		_ = n.Close()
	}
	c.client.CloseIdleConnections()
}

// freeLoopbackAddr returns a 127.0.0.1 address whose port was free a moment ago (each node
// must know its own address before it starts, to advertise it).
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// randomKeyJSON is a well-formed public-key JSON (spec/registry-auth.md §9) of random bytes
// in noise's encoding: the registry checks its shape, not the key (registrytest's
// RandomKeyJSON, which this non-test code may not import).
func randomKeyJSON() json.RawMessage {
	var pk noise.PublicKey
	_, _ = rand.Read(pk.X25519[:])
	_, _ = rand.Read(pk.MLKEM768[:])
	return pk.AppendJSON(nil)
}
