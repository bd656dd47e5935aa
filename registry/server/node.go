package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/execlab/executor/registry/rendezvous"
)

// NodeOptions configure a Node. NodeID and AdvertiseURL are required; the struct is never
// mutated.
type NodeOptions struct {
	// NodeID names this node among the registry nodes sharing the store (a StatefulSet
	// pod name, a host name). A restarted process takes its node id over at once.
	NodeID string
	// AdvertiseURL is the http(s) base URL at which this node alone is reachable; harness
	// URLs for executors attached here use it (with ws/wss).
	AdvertiseURL string
	// KeyRotation overrides KeyRotation. Zero means the default.
	KeyRotation time.Duration
	// HeartbeatInterval and LeaseTTL override the defaults of the same names. Zero means
	// the default; LeaseTTL must exceed HeartbeatInterval.
	HeartbeatInterval, LeaseTTL time.Duration
	// Logger receives warnings (a failed renewal, a node id taken over). Nil discards.
	Logger *slog.Logger
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
	// Observer receives location changes and lease renewals (metrics.go). Nil means none.
	Observer NodeObserver
}

// Node is one registry process's part in a set of nodes sharing a store
// (docs/operations.md):
//
//   - It keeps the Signer's key ring in the store: every node signs with the key of the
//     current rotation period (KeyRotation) and verifies every stored key whose URLs may
//     still be valid, so a URL minted by one node, or by a previous process, verifies on
//     every node. The next period's key is stored a period ahead, so every node holds it
//     before any signs with it.
//   - It holds a lease on its node id (renewed every HeartbeatInterval, valid LeaseTTL) and
//     records, through the Hub's ExecutorAttached/ExecutorDetached hooks, which
//     environments' executor sockets it holds. Locate hands out a location only while the
//     node that recorded it holds its lease with the same process instance: a killed
//     node's locations go stale within LeaseTTL, a restarted node's at once.
//
// Safe for concurrent use. Run is its one goroutine, owned by the caller.
type Node struct {
	store  Store
	signer *rendezvous.Signer
	opts   NodeOptions
	log    *slog.Logger
	// lease is this process's claim (LeaseUntil is rewritten per renewal by Run only).
	lease NodeLease

	// closing is set by Release: sockets closed by the shutdown leave their locations to
	// Release's bulk delete.
	closing atomic.Bool
	// leaseUntil is when the last successful claim or renewal lapses (Unix ms); Ready
	// compares it with the clock.
	leaseUntil atomic.Int64

	// localMu guards local: the Hub's hooks (upgrade and socket goroutines) and Run's
	// location check race on it.
	localMu sync.Mutex
	// local is the socket id of every executor socket this process recorded and still
	// holds, by environment id; guarded by localMu.
	local map[string]string
	// ticks counts Run's heartbeats; every relocateEvery-th also checks local (Run only).
	ticks int

	// keyMu serialises key-ring refreshes (Start and Run's ticks).
	keyMu sync.Mutex
	// ringEpoch is the rotation period whose key signs; guarded by keyMu.
	ringEpoch int64
}

// NewNode returns a Node for st and signer (the Hub's and the Server's). It starts nothing
// and touches no store.
func NewNode(st Store, signer *rendezvous.Signer, opts *NodeOptions) (*Node, error) {
	if st == nil || signer == nil || opts == nil || opts.NodeID == "" || opts.AdvertiseURL == "" {
		return nil, errors.New("registry node: store, signer, NodeID and AdvertiseURL are required")
	}
	o := *opts
	if _, err := wsBase(o.AdvertiseURL); err != nil {
		return nil, fmt.Errorf("registry node: AdvertiseURL: %w", err)
	}
	if o.KeyRotation <= 0 {
		o.KeyRotation = KeyRotation
	}
	if o.KeyRotation < time.Second {
		return nil, errors.New("registry node: KeyRotation must be at least a second")
	}
	if o.HeartbeatInterval <= 0 {
		o.HeartbeatInterval = HeartbeatInterval
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = LeaseTTL
	}
	if o.LeaseTTL <= o.HeartbeatInterval {
		return nil, errors.New("registry node: LeaseTTL must exceed HeartbeatInterval")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Observer == nil {
		o.Observer = nopNodeObserver{}
	}
	var inst [8]byte
	_, _ = rand.Read(inst[:])
	return &Node{
		local: map[string]string{},
		store: st, signer: signer, opts: o, log: o.Logger.With("component", "registry-node", "node_id", o.NodeID),
		lease: NodeLease{NodeID: o.NodeID, Instance: hex.EncodeToString(inst[:]), AdvertiseURL: strings.TrimRight(o.AdvertiseURL, "/")},
	}, nil
}

// ID returns the node id.
func (n *Node) ID() string { return n.lease.NodeID }

// Start loads (creating if needed) the key ring into the Signer and claims the node id.
// Call it before serving: URLs signed from then on verify on every node and after a
// restart.
func (n *Node) Start(ctx context.Context) error {
	if err := n.refreshKeys(ctx, true); err != nil {
		return err
	}
	l := n.lease
	l.LeaseUntil = n.opts.Now().Add(n.opts.LeaseTTL)
	if err := n.store.ClaimNode(ctx, l); err != nil {
		return err
	}
	n.leaseUntil.Store(l.LeaseUntil.UnixMilli())
	return nil
}

// Ready reports whether the node holds its lease now: it reached the store within
// LeaseTTL and no other process took its node id. /readyz answers 503 otherwise, so a
// load balancer stops sending executors to a node whose locations would not be handed out.
func (n *Node) Ready() bool {
	return !n.closing.Load() && n.opts.Now().UnixMilli() < n.leaseUntil.Load()
}

// Run renews the lease and keeps the key ring current every HeartbeatInterval until ctx
// ends. Failures are logged and retried at the next tick (the lease lapses after LeaseTTL
// without renewal, and the node's locations stop being handed out). Every
// RelocationCheckInterval it also closes, through closeExecutor (the Hub's CloseExecutor),
// the executor sockets whose location another node has taken since: the executor
// reattached there (this socket is a dead or superseded one) or a newer registration did.
// That is cross-node fencing; on one node, register fences at once (Hub.Fence).
func (n *Node) Run(ctx context.Context, closeExecutor func(environmentID, socketID string) bool) {
	t := time.NewTicker(n.opts.HeartbeatInterval)
	defer t.Stop()
	n.log.Debug("node heartbeat started")
	defer n.log.Debug("node heartbeat stopped")
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n.tick(ctx)
		n.ticks++
		if closeExecutor != nil && n.ticks%relocateEvery(n.opts.HeartbeatInterval) == 0 {
			n.closeRelocated(ctx, closeExecutor)
		}
	}
}

// relocateEvery is how many heartbeats make a RelocationCheckInterval (at least one).
func relocateEvery(hb time.Duration) int { return max(1, int(RelocationCheckInterval/hb)) }

// closeRelocated closes the local executor sockets whose recorded location no longer
// stands (another node's attach overwrote it).
func (n *Node) closeRelocated(ctx context.Context, closeExecutor func(environmentID, socketID string) bool) {
	ctx, cancel := context.WithTimeout(ctx, LocationTimeout)
	defer cancel()
	// The snapshot comes first: Attached adds a socket to local only after its location is
	// written, so every socket in it is in the store unless something overwrote it since.
	n.localMu.Lock()
	mine := make(map[string]string, len(n.local))
	for env, sock := range n.local {
		mine[env] = sock
	}
	n.localMu.Unlock()
	standing, err := n.store.LocationsOf(ctx, n.lease)
	if err != nil {
		n.log.Warn("reading this node's executor locations", "error", err.Error())
		return
	}
	for env, sock := range mine {
		// A socket that ended or was replaced here meanwhile is not the Hub's current one:
		// CloseExecutor leaves it.
		if standing[env] != sock && closeExecutor(env, sock) {
			n.opts.Observer.LocationChanged(LocationMovedAway)
			n.log.Info("closed an executor socket whose location moved to another node", "environment_id", env)
		}
	}
}

func (n *Node) tick(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, n.opts.HeartbeatInterval)
	defer cancel()
	l := n.lease
	l.LeaseUntil = n.opts.Now().Add(n.opts.LeaseTTL)
	ok, err := n.store.RenewNode(ctx, l)
	switch {
	case err != nil:
		n.opts.Observer.LeaseRenewal(LeaseRenewError)
		n.log.Warn("renewing node lease", "error", err.Error())
	case !ok:
		n.opts.Observer.LeaseRenewal(LeaseLost)
		n.log.Error("another registry process claimed this node id; executors attached here are no longer handed out (give every node its own --node-id)")
		n.leaseUntil.Store(0)
	default:
		n.opts.Observer.LeaseRenewal(LeaseRenewed)
		n.leaseUntil.Store(l.LeaseUntil.UnixMilli())
	}
	if err := n.refreshKeys(ctx, false); err != nil {
		n.log.Warn("refreshing URL signing keys", "error", err.Error())
	}
}

// epoch is the rotation period containing t (positive for any t after 1970 + a period).
func (n *Node) epoch(t time.Time) int64 { return t.UnixMilli() / n.opts.KeyRotation.Milliseconds() }

// refreshKeys makes sure the store holds the keys of this period and the next, loads every
// key whose URLs may still be valid into the Signer, signing with this period's, and
// prunes older keys. Without force it does nothing while the ring is current.
func (n *Node) refreshKeys(ctx context.Context, force bool) error {
	n.keyMu.Lock()
	defer n.keyMu.Unlock()
	now := n.opts.Now()
	cur := n.epoch(now)
	if !force && cur == n.ringEpoch {
		return nil
	}
	for _, id := range []int64{cur, cur + 1} {
		k := make([]byte, rendezvous.SignerKeyLen)
		_, _ = rand.Read(k)
		if _, err := n.store.EnsureSigningKey(ctx, id, k, now); err != nil {
			return err
		}
	}
	// A key signs until its period ends; its URLs live at most MaxURLTTL after that.
	minID := n.epoch(now.Add(-MaxURLTTL)) - 1
	keys, err := n.store.SigningKeys(ctx, minID)
	if err != nil {
		return err
	}
	if err := n.signer.SetKeys(keys, cur); err != nil {
		return fmt.Errorf("loading URL signing keys: %w", err)
	}
	if err := n.store.PruneSigningKeys(ctx, minID); err != nil {
		return err
	}
	n.ringEpoch = cur
	return nil
}

// Attached records that this node holds the environment's executor socket; it is the
// Hub's ExecutorAttached hook.
func (n *Node) Attached(ctx context.Context, env string, generation int64, socketID string) error {
	ctx, cancel := context.WithTimeout(ctx, LocationTimeout)
	defer cancel()
	if err := n.store.SetLocation(ctx, Location{EnvironmentID: env, NodeID: n.lease.NodeID, Instance: n.lease.Instance,
		SocketID: socketID, Generation: generation}); err != nil {
		n.opts.Observer.LocationChanged(LocationAttachFailed)
		return err
	}
	n.localMu.Lock()
	n.local[env] = socketID // a replaced socket of the same environment is closed by the Hub
	n.localMu.Unlock()
	n.opts.Observer.LocationChanged(LocationAttached)
	return nil
}

// Detached forgets the location Attached recorded for socketID; it is the Hub's
// ExecutorDetached hook. A failure is logged: the location then stays until the
// executor attaches again (anywhere) or this node's lease ends, and connects meanwhile get
// this node's URL, where the harness upgrade finds no executor (409, retried).
func (n *Node) Detached(env, socketID string) {
	n.localMu.Lock()
	if n.local[env] == socketID {
		delete(n.local, env)
	}
	n.localMu.Unlock()
	if n.closing.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), LocationTimeout)
	defer cancel()
	if err := n.store.ClearLocation(ctx, env, socketID); err != nil {
		n.log.Warn("clearing executor location", "environment_id", env, "error", err.Error())
		return
	}
	n.opts.Observer.LocationChanged(LocationDetached)
}

// staleRefused records that a connect refused a location that no longer stands.
func (n *Node) staleRefused() { n.opts.Observer.LocationChanged(LocationStaleRefused) }

// Locate returns the environment's live location, whether it is this process, and the
// ws(s) base URL of its node. ErrNotFound when no live node holds the executor.
func (n *Node) Locate(ctx context.Context, env string) (loc Location, local bool, base string, err error) {
	loc, err = n.store.Location(ctx, env, n.opts.Now())
	if err != nil {
		return Location{}, false, "", err
	}
	base, err = wsBase(loc.AdvertiseURL)
	if err != nil {
		return Location{}, false, "", fmt.Errorf("reading location of %s: node %s advertises a bad url", env, loc.NodeID)
	}
	return loc, loc.NodeID == n.lease.NodeID && loc.Instance == n.lease.Instance, base, nil
}

// Release gives up the lease and deletes this process's locations (clean shutdown): other
// nodes stop handing them out at once instead of after LeaseTTL.
func (n *Node) Release(ctx context.Context) error {
	n.closing.Store(true)
	ctx, cancel := context.WithTimeout(ctx, LocationTimeout)
	defer cancel()
	return n.store.ReleaseNode(ctx, n.lease)
}

// wsBase turns an http(s) base URL into the ws(s) base of its rendezvous, without a
// trailing slash.
func wsBase(u string) (string, error) {
	u = strings.TrimRight(u, "/")
	switch {
	case strings.HasPrefix(u, "http://"):
		return "ws://" + strings.TrimPrefix(u, "http://"), nil
	case strings.HasPrefix(u, "https://"):
		return "wss://" + strings.TrimPrefix(u, "https://"), nil
	}
	return "", errors.New("url must be http:// or https://")
}
