package server_test

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/registry/api"
	"github.com/execlab/executor/registry/registrytest"
	"github.com/execlab/executor/registry/rendezvous"
	"github.com/execlab/executor/registry/server"
	"github.com/execlab/executor/relay/wsconn"
)

// freshStoreDSN returns the DSN of an empty store of kind: a new SQLite file, or a new
// PostgreSQL database (dropped at cleanup) so the shared tables of the scale-out (signing
// keys, node leases) see no other test's clock.
func freshStoreDSN(t *testing.T, kind string) string {
	t.Helper()
	if kind == "sqlite" {
		return filepath.Join(t.TempDir(), "registry.db")
	}
	return registrytest.FreshPostgres(t, os.Getenv(postgresDSNEnv), "executor_node_test_")
}

// forEachCluster runs fn against a cluster of n nodes of each store kind (storeKinds), in
// a subtest named by the kind.
func forEachCluster(t *testing.T, n int, fn func(t *testing.T, c *cluster)) {
	for _, kind := range storeKinds(t) {
		t.Run(kind, func(t *testing.T) { fn(t, newCluster(t, kind, n)) })
	}
}

// cluster is n registry nodes (Hub + Server + Node each, on its own loopback listener)
// sharing one store; nodes[0]'s URL stands in for the load-balanced public URL.
type cluster struct {
	t     *testing.T
	dsn   string
	clock *clock
	nodes []*clusterNode
}

type clusterNode struct {
	URL   string
	hub   *rendezvous.Hub
	node  *server.Node
	store server.Store
	obs   *nodeObs // the node's location and lease events
	stop  func()
}

func newCluster(t *testing.T, kind string, n int) *cluster {
	t.Helper()
	c := &cluster{t: t, dsn: freshStoreDSN(t, kind), clock: &clock{}}
	c.clock.ns.Store(time.Now().UnixNano())
	for i := range n {
		c.nodes = append(c.nodes, c.start("node-"+string(rune('a'+i)), ""))
	}
	return c
}

// start runs a node with id on addr ("" picks a port).
func (c *cluster) start(id, addr string) *clusterNode {
	t := c.t
	t.Helper()
	st, err := server.OpenStore(context.Background(), c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := server.ParseTokens(strings.NewReader(tokAll + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	self := "http://" + ln.Addr().String()
	public := self
	if len(c.nodes) > 0 {
		public = c.nodes[0].URL
	}
	signer := rendezvous.NewRandomSigner()
	obs := &nodeObs{}
	node, err := server.NewNode(st, signer, &server.NodeOptions{NodeID: id, AdvertiseURL: self, Now: c.clock.now, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	hub, err := rendezvous.New(&rendezvous.Options{
		Signer: signer, CurrentGeneration: server.GenerationFunc(st), Now: c.clock.now,
		Conn: &wsconn.Options{PingInterval: time.Hour}, ExecutorAttached: node.Attached, ExecutorDetached: node.Detached,
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(&server.Options{Store: st, Tokens: tokens, Hub: hub, Signer: signer, PublicURL: public, Node: node, Now: c.clock.now})
	if err != nil {
		t.Fatal(err)
	}
	hs := server.NewHTTPServer(s, nil)
	served := make(chan struct{})
	go func() { defer close(served); _ = hs.Serve(ln) }()
	cn := &clusterNode{URL: self, hub: hub, node: node, store: st, obs: obs}
	stopped := false
	cn.stop = func() {
		if stopped {
			return
		}
		stopped = true
		hs.Close()
		<-served
		hub.Close()
		st.Close()
		http.DefaultClient.CloseIdleConnections()
	}
	t.Cleanup(cn.stop)
	return cn
}

// fixtureFor returns a fixture whose HTTP calls go to node i.
func (c *cluster) fixtureFor(i int) *fixture {
	return &fixture{t: c.t, URL: c.nodes[i].URL, hub: c.nodes[i].hub, store: c.nodes[i].store, clock: c.clock}
}

// at rewrites a rendezvous URL to be dialled at node i (as a load balancer would route it).
func (c *cluster) at(rawURL string, i int) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		c.t.Fatal(err)
	}
	u.Host = strings.TrimPrefix(c.nodes[i].URL, "http://")
	return u.String()
}

func hostOf(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// TestNodes_ConnectOnAnyNode: an executor registered through node a and attached to node c
// (the load balancer's choice) is reachable through a connect on every node, each handing
// out node c's URL; a harness URL minted by node a verifies at node c (shared keys).
func TestNodes_ConnectOnAnyNode(t *testing.T) {
	forEachCluster(t, 3, func(t *testing.T, c *cluster) {
		const env = "env-scale"
		reg := c.fixtureFor(0).register(env, keyJSON())
		if got, want := hostOf(t, reg.URL), hostOf(t, c.nodes[0].URL); got != want {
			t.Fatalf("executor url host: got %s, want the public url's %s", got, want)
		}
		c.fixtureFor(0).online(c.at(reg.URL, 2))
		c.fixtureFor(2).waitOnline(env, true)
		for i := range c.nodes {
			st, code, b := c.fixtureFor(i).connect(env, tokAll, keyJSON())
			if st != 200 {
				t.Fatalf("connect at node %d: got %d %s, want 200", i, st, code)
			}
			if got, want := hostOf(t, b.URL), hostOf(t, c.nodes[2].URL); got != want {
				t.Errorf("connect at node %d: harness url host %s, want node c's %s", i, got, want)
			}
		}
		_, _, b := c.fixtureFor(0).connect(env, tokAll, keyJSON())
		h, err := wsconn.Dial(context.Background(), b.URL, nil)
		if err != nil {
			t.Fatalf("harness url minted by node a, dialled at node c: %v", err)
		}
		h.Close()
	})
}

// TestNodes_StaleLocationNeverHandedOut: when the holding node stops renewing its lease
// (killed), connect answers 409 environment_offline once LeaseTTL has passed, and hands
// out the new node once the executor redials its (still valid) URL elsewhere. A node
// restarted under the same id makes its previous process's locations stale at once.
func TestNodes_StaleLocationNeverHandedOut(t *testing.T) {
	forEachCluster(t, 3, func(t *testing.T, c *cluster) {
		const env = "env-stale"
		reg := c.fixtureFor(0).register(env, keyJSON())
		ex := c.fixtureFor(0).online(c.at(reg.URL, 2))
		c.fixtureFor(2).waitOnline(env, true)
		// Node c "dies": it renews nothing; the others do.
		c.clock.advance(server.LeaseTTL + time.Second)
		for _, i := range []int{0, 1} {
			c.nodes[i].node.TickForTest(context.Background())
		}
		if st, code, _ := c.fixtureFor(1).connect(env, tokAll, keyJSON()); st != 409 || code != api.CodeEnvironmentOffline {
			t.Fatalf("connect with the holding node's lease lapsed: got %d %s, want 409 environment_offline", st, code)
		}
		for i, want := range []int{200, 200, 503} {
			if got := readyz(t, c.nodes[i].URL); got != want {
				t.Errorf("node %d /readyz: got %d, want %d", i, got, want)
			}
		}
		ex.Close()
		c.fixtureFor(0).online(c.at(reg.URL, 1)) // the same URL, through another node
		c.fixtureFor(1).waitOnline(env, true)
		st, code, b := c.fixtureFor(0).connect(env, tokAll, keyJSON())
		if st != 200 || hostOf(t, b.URL) != hostOf(t, c.nodes[1].URL) {
			t.Fatalf("connect after the executor moved: got %d %s %s, want 200 at node b", st, code, hostOf(t, b.URL))
		}
		// Node b restarts under the same id and address: its old location is stale at once.
		addr := hostOf(t, c.nodes[1].URL)
		c.nodes[1].node.KillForTest()
		c.nodes[1].stop()
		c.nodes[1] = c.start("node-b", addr)
		if st, code, _ := c.fixtureFor(0).connect(env, tokAll, keyJSON()); st != 409 || code != api.CodeEnvironmentOffline {
			t.Errorf("connect after the holding node restarted: got %d %s, want 409 environment_offline", st, code)
		}
		// The executor's pre-restart URL still works at the restarted node (keys persisted).
		c.fixtureFor(0).online(c.at(reg.URL, 1))
		c.fixtureFor(1).waitOnline(env, true)
		if st, code, _ := c.fixtureFor(2).connect(env, tokAll, keyJSON()); st != 200 {
			t.Errorf("connect after the executor reattached to the restarted node: got %d %s, want 200", st, code)
		}
	})
}

// TestNode_KeyRotation: after a rotation period a node signs with the next key, which
// every node already holds; URLs of the previous key verify until they expire; keys
// whose URLs can no longer be valid are pruned from the store.
func TestNode_KeyRotation(t *testing.T) {
	forEachCluster(t, 2, func(t *testing.T, c *cluster) {
		const env = "env-rotate"
		reg := c.fixtureFor(0).register(env, keyJSON())
		c.clock.advance(server.KeyRotation)
		c.nodes[0].node.TickForTest(context.Background()) // node 0 rotates; node 1 has not ticked
		reg2 := c.fixtureFor(0).register(env, keyJSON())
		if kOf(t, reg.URL) == kOf(t, reg2.URL) {
			t.Fatalf("key id after a rotation period: still %s", kOf(t, reg.URL))
		}
		// Node 1 verifies the new key without having ticked (created a period ahead).
		ex := c.fixtureFor(0).online(c.at(reg2.URL, 1))
		c.fixtureFor(1).waitOnline(env, true)
		ex.Close()
		c.fixtureFor(1).waitOnline(env, false)
		// Far past every URL of the first key: it is pruned.
		c.clock.advance(server.MaxURLTTL + 2*server.KeyRotation)
		c.nodes[0].node.TickForTest(context.Background())
		keys, err := c.nodes[0].store.SigningKeys(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if id := kOf(t, reg.URL); id == itoa64(k.ID) {
				t.Errorf("key %s is still stored after its URLs expired", id)
			}
		}
	})
}

func kOf(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("k")
}

func itoa64(v int64) string { return strconv.FormatInt(v, 10) }

func readyz(t *testing.T, base string) int {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestNodes_RelocatedSocketClosed: when the executor reattaches to another node while its
// old socket still looks open here (a half-dead connection), the old node's relocation
// check closes the old socket; a socket whose location stands is left alone.
func TestNodes_RelocatedSocketClosed(t *testing.T) {
	forEachCluster(t, 2, func(t *testing.T, c *cluster) {
		const env, other = "env-moved", "env-stays"
		reg := c.fixtureFor(0).register(env, keyJSON())
		regOther := c.fixtureFor(0).register(other, keyJSON())
		c.fixtureFor(0).online(c.at(reg.URL, 0))
		c.fixtureFor(0).online(c.at(regOther.URL, 0))
		c.fixtureFor(0).waitOnline(env, true)
		c.fixtureFor(0).waitOnline(other, true)
		c.fixtureFor(1).online(c.at(reg.URL, 1)) // the executor reattached at node 1
		c.fixtureFor(1).waitOnline(env, true)
		c.nodes[0].node.CloseRelocatedForTest(context.Background(), c.nodes[0].hub.CloseExecutor)
		c.fixtureFor(0).waitOnline(env, false)
		if _, ok := c.nodes[0].hub.Online(other); !ok {
			t.Errorf("executor socket whose location stands was closed")
		}
		if _, ok := c.nodes[1].hub.Online(env); !ok {
			t.Errorf("the reattached socket at node 1 is gone")
		}
		st, code, b := c.fixtureFor(0).connect(env, tokAll, keyJSON())
		if st != 200 || hostOf(t, b.URL) != hostOf(t, c.nodes[1].URL) {
			t.Errorf("connect after the move: got %d %s %s, want 200 at node 1", st, code, hostOf(t, b.URL))
		}
	})
}
