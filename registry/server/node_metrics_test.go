package server_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/execlab/executor/registry/api"
	"github.com/execlab/executor/registry/server"
)

// nodeObs counts a node's NodeObserver events by value.
type nodeObs struct {
	mu        sync.Mutex
	locations map[string]int
	renewals  map[string]int
}

func (o *nodeObs) LocationChanged(reason string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.locations == nil {
		o.locations = map[string]int{}
	}
	o.locations[reason]++
}

func (o *nodeObs) LeaseRenewal(outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.renewals == nil {
		o.renewals = map[string]int{}
	}
	o.renewals[outcome]++
}

func (o *nodeObs) location(reason string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.locations[reason]
}

func (o *nodeObs) renewal(outcome string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.renewals[outcome]
}

// waitLocation waits (bounded) until o has counted want events of reason: the Hub's
// detach hook runs on the socket's goroutine, after the socket is gone.
func waitLocation(t *testing.T, o *nodeObs, who, reason string, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for o.location(reason) < want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s location changes: got %d, want %d", who, reason, o.location(reason), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := o.location(reason); got != want {
		t.Fatalf("%s: %s location changes: got %d, want %d", who, reason, got, want)
	}
}

// TestNodes_LocationAndLeaseEvents: each node reports the location changes it is party
// to — an executor attaching here, its socket closed here because the executor moved to
// another node (then detached), a connect refusing a location left by an older
// registration — and each heartbeat's lease renewal, "lost" once another process
// claimed the node id.
func TestNodes_LocationAndLeaseEvents(t *testing.T) {
	forEachCluster(t, 2, func(t *testing.T, c *cluster) {
		a, b := c.nodes[0], c.nodes[1]
		const env = "env-events"
		reg := c.fixtureFor(0).register(env, keyJSON())
		c.fixtureFor(0).online(c.at(reg.URL, 0))
		c.fixtureFor(0).waitOnline(env, true)
		waitLocation(t, a.obs, "node a", server.LocationAttached, 1)

		c.fixtureFor(1).online(c.at(reg.URL, 1)) // the executor reattached at node b
		c.fixtureFor(1).waitOnline(env, true)
		waitLocation(t, b.obs, "node b", server.LocationAttached, 1)
		a.node.CloseRelocatedForTest(context.Background(), a.hub.CloseExecutor)
		waitLocation(t, a.obs, "node a", server.LocationMovedAway, 1)
		waitLocation(t, a.obs, "node a", server.LocationDetached, 1)
		if got := b.obs.location(server.LocationMovedAway) + b.obs.location(server.LocationDetached); got != 0 {
			t.Errorf("node b, whose location stands: %d moved_away/detached events, want 0", got)
		}

		// A newer registration that has not attached yet: the standing location is
		// the older one's, and a connect refuses it.
		c.fixtureFor(0).register(env, keyJSON())
		if st, code, _ := c.fixtureFor(0).connect(env, tokAll, keyJSON()); st != 409 || code != api.CodeEnvironmentOffline {
			t.Fatalf("connect with only the older registration's location: got %d %s, want 409 environment_offline", st, code)
		}
		waitLocation(t, a.obs, "node a", server.LocationStaleRefused, 1)

		b.node.TickForTest(context.Background())
		if got := b.obs.renewal(server.LeaseRenewed); got != 1 {
			t.Errorf("node b lease renewals ok: got %d, want 1", got)
		}
		c.nodes[1] = c.start("node-b", "") // another process claims node b's id
		b.node.TickForTest(context.Background())
		if got := b.obs.renewal(server.LeaseLost); got != 1 {
			t.Errorf("node b lease renewals lost after its id was claimed: got %d, want 1", got)
		}
	})
}
