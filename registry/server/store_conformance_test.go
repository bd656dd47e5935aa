package server_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/execlab/executor/registry/server"
)

// The Store conformance suite: every method of server.Store, its documented contract,
// against each store kind (SQLite always, PostgreSQL when EXECUTOR_TEST_POSTGRES_DSN is set
// and always under CI=true). It talks to the Store interface only, so a new implementation
// is added by adding its kind to storeKinds and openStore.
//
// PostgreSQL is one database shared by every test (and by test/e2e when CI runs packages
// side by side), so each case uses its own environment ids, node ids, signing-key ids in a
// negative range nothing else uses, and authorization expiries far in the past for the
// global prunes.

func TestStoreConformance(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, st server.Store)
	}{
		{"RegisterGenerations", conformRegisterGenerations},
		{"RegistrationNotFound", conformRegistrationNotFound},
		{"MarkExitedOnce", conformMarkExitedOnce},
		{"AuthorizationsLiveAndConsume", conformAuthorizations},
		{"ConsumeAtMostOnceConcurrently", conformConsumeConcurrent},
		{"PruneAuthorizations", conformPruneAuthorizations},
		{"SigningKeys", conformSigningKeys},
		{"EnsureSigningKeyConcurrently", conformSigningKeyConcurrent},
		{"NodeLeases", conformNodeLeases},
		{"Locations", conformLocations},
		{"RegisterConcurrently", conformRegisterConcurrent},
		{"CanceledContext", conformCanceledContext},
		{"Closed", conformClosed},
	}
	for _, kind := range storeKinds(t) {
		t.Run(kind, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { c.run(t, openStore(t, kind)) })
			}
		})
	}
}

// The stores keep times at millisecond precision; conformance times are whole milliseconds.
var conformNow = time.UnixMilli(time.Now().UnixMilli())

func hash(s string) [32]byte { return sha256.Sum256([]byte(s)) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// expect fails t with what unless err is nil and ok is want.
func expect(t *testing.T, ok bool, err error, want bool, what string) {
	t.Helper()
	must(t, err)
	if ok != want {
		t.Fatal(what)
	}
}

func conformRegisterGenerations(t *testing.T, st server.Store) {
	ctx := context.Background()
	env := uniqueEnv("conf-gen")
	for i, reg := range []string{"reg-a", "reg-b", "reg-c"} {
		key := []byte(`{"k":"` + reg + `"}`)
		r, err := st.Register(ctx, env, reg, key, hash(reg), conformNow.Add(time.Duration(i)*time.Second))
		must(t, err)
		if r.Generation != int64(i+1) || r.RegistrationID != reg || r.EnvironmentID != env || !bytes.Equal(r.ExecutorPublicKey, key) {
			t.Fatalf("Register #%d = %+v", i+1, r)
		}
		got, err := st.Registration(ctx, env)
		must(t, err)
		want := server.Registration{EnvironmentID: env, RegistrationID: reg, Generation: int64(i + 1), ExecutorPublicKey: key, CreatedAt: conformNow.Add(time.Duration(i) * time.Second)}
		if got.EnvironmentID != want.EnvironmentID || got.RegistrationID != want.RegistrationID || got.Generation != want.Generation ||
			!bytes.Equal(got.ExecutorPublicKey, want.ExecutorPublicKey) || !got.CreatedAt.Equal(want.CreatedAt) || !got.ExitedAt.IsZero() {
			t.Fatalf("Registration after #%d = %+v, want %+v", i+1, got, want)
		}
	}
	// Generations count per environment: another environment starts at 1.
	r, err := st.Register(ctx, uniqueEnv("conf-gen"), "reg-a", []byte("k"), hash("x"), conformNow)
	must(t, err)
	if r.Generation != 1 {
		t.Fatalf("first registration of a fresh environment has generation %d", r.Generation)
	}
}

func conformRegistrationNotFound(t *testing.T, st server.Store) {
	_, err := st.Registration(context.Background(), uniqueEnv("conf-none"))
	if !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("Registration of an unknown environment: %v, want ErrNotFound", err)
	}
}

func conformMarkExitedOnce(t *testing.T, st server.Store) {
	ctx := context.Background()
	env := uniqueEnv("conf-exit")
	_, err := st.Register(ctx, env, "reg-1", []byte("k"), hash("exit-1"), conformNow)
	must(t, err)
	for _, c := range []struct {
		name  string
		env   string
		reg   string
		token string
	}{
		{"wrong token", env, "reg-1", "exit-2"},
		{"wrong registration", env, "reg-0", "exit-1"},
		{"wrong environment", uniqueEnv("conf-exit"), "reg-1", "exit-1"},
	} {
		ok, err := st.MarkExited(ctx, c.env, c.reg, hash(c.token), conformNow)
		must(t, err)
		if ok {
			t.Fatalf("MarkExited with %s succeeded", c.name)
		}
	}
	at := conformNow.Add(3 * time.Second)
	ok, err := st.MarkExited(ctx, env, "reg-1", hash("exit-1"), at)
	expect(t, ok, err, true, "MarkExited with the registration's token failed")
	r, err := st.Registration(ctx, env)
	must(t, err)
	if !r.ExitedAt.Equal(at) {
		t.Fatalf("ExitedAt = %v, want %v", r.ExitedAt, at)
	}
	// The token is good once.
	ok, err = st.MarkExited(ctx, env, "reg-1", hash("exit-1"), at.Add(time.Second))
	expect(t, ok, err, false, "MarkExited succeeded twice")
	// A new registration starts unexited, and the old registration's token no longer works.
	_, err = st.Register(ctx, env, "reg-2", []byte("k"), hash("exit-3"), at.Add(time.Second))
	must(t, err)
	r, err = st.Registration(ctx, env)
	must(t, err)
	if !r.ExitedAt.IsZero() {
		t.Fatalf("a new registration starts exited at %v", r.ExitedAt)
	}
	ok, err = st.MarkExited(ctx, env, "reg-1", hash("exit-1"), at.Add(2*time.Second))
	expect(t, ok, err, false, "MarkExited of a fenced registration succeeded")
}

func conformAuthorizations(t *testing.T, st server.Store) {
	ctx := context.Background()
	env := uniqueEnv("conf-authz")
	other := uniqueEnv("conf-authz")
	issue := func(token, env, reg, key, tokenID string, expires time.Time) {
		t.Helper()
		must(t, st.IssueAuthorization(ctx, server.Authorization{
			TokenHash: hash(token + env), EnvironmentID: env, RegistrationID: reg,
			HarnessKeyHash: hash(key), ExpiresAt: expires, TokenID: tokenID,
		}))
	}
	live := func(env, tokenID string, now time.Time, wantLive, wantToken int) {
		t.Helper()
		l, tok, err := st.LiveAuthorizations(ctx, env, tokenID, now)
		must(t, err)
		if l != wantLive || tok != wantToken {
			t.Fatalf("LiveAuthorizations(%s) = %d, %d; want %d, %d", tokenID, l, tok, wantLive, wantToken)
		}
	}
	exp := conformNow.Add(time.Minute)
	issue("t1", env, "reg-1", "hk-1", "tok-a", exp)
	issue("t2", env, "reg-1", "hk-1", "tok-a", exp)
	issue("t3", env, "reg-1", "hk-2", "tok-b", exp.Add(time.Minute))
	issue("t4", other, "reg-1", "hk-1", "tok-a", exp)
	live(env, "tok-a", conformNow, 3, 2)
	live(env, "tok-b", conformNow, 3, 1)
	live(env, "tok-c", conformNow, 3, 0)
	// Expiry is exclusive: at exp the first two are no longer live.
	live(env, "tok-a", exp, 1, 0)

	consume := func(token, env, reg, key string, now time.Time) bool {
		t.Helper()
		ok, err := st.ConsumeAuthorization(ctx, hash(token+env), env, reg, hash(key), now)
		must(t, err)
		return ok
	}
	// Every binding must match.
	for _, c := range []struct{ name, env, reg, key string }{
		{"environment", other, "reg-1", "hk-1"},
		{"registration", env, "reg-2", "hk-1"},
		{"harness key", env, "reg-1", "hk-2"},
	} {
		if consume("t1", c.env, c.reg, c.key, conformNow) {
			t.Fatalf("ConsumeAuthorization with another %s succeeded", c.name)
		}
	}
	if consume("t-unknown", env, "reg-1", "hk-1", conformNow) {
		t.Fatal("ConsumeAuthorization of an unknown token succeeded")
	}
	if !consume("t1", env, "reg-1", "hk-1", conformNow) {
		t.Fatal("ConsumeAuthorization of a live, matching authorization failed")
	}
	if consume("t1", env, "reg-1", "hk-1", conformNow) {
		t.Fatal("ConsumeAuthorization succeeded twice")
	}
	live(env, "tok-a", conformNow, 2, 1)
	// An expired authorization cannot be consumed.
	if consume("t2", env, "reg-1", "hk-1", exp) {
		t.Fatal("ConsumeAuthorization of an expired authorization succeeded")
	}
	if !consume("t3", env, "reg-1", "hk-2", exp) {
		t.Fatal("ConsumeAuthorization of the still-live authorization failed")
	}
	live(other, "tok-a", conformNow, 1, 1)
}

func conformConsumeConcurrent(t *testing.T, st server.Store) {
	ctx := context.Background()
	env := uniqueEnv("conf-race")
	a := server.Authorization{TokenHash: hash(env), EnvironmentID: env, RegistrationID: "reg-1", HarnessKeyHash: hash("hk"), ExpiresAt: conformNow.Add(time.Minute)}
	must(t, st.IssueAuthorization(ctx, a))
	const n = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range n {
		wg.Go(func() {
			ok, err := st.ConsumeAuthorization(ctx, a.TokenHash, env, "reg-1", a.HarnessKeyHash, conformNow)
			if err != nil && !errors.Is(err, server.ErrConflict) {
				t.Error(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if ok {
				wins++
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d concurrent consumers succeeded, want exactly 1", wins)
	}
}

// farPast returns a random whole-millisecond time in 1970–1971 for the prune tests: the
// prunes are global, and nothing else issues authorizations that expire then.
func farPast() time.Time {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return time.UnixMilli(int64(binary.BigEndian.Uint32(b[:])%1_000_000) * 1000)
}

func conformPruneAuthorizations(t *testing.T, st server.Store) {
	ctx := context.Background()
	env := uniqueEnv("conf-prune")
	base := farPast()
	for i, d := range []time.Duration{0, time.Second, 2 * time.Second} {
		must(t, st.IssueAuthorization(ctx, server.Authorization{
			TokenHash: hash(env + string(rune('a'+i))), EnvironmentID: env, RegistrationID: "reg-1",
			HarnessKeyHash: hash("hk"), ExpiresAt: base.Add(d),
		}))
	}
	// Prune deletes what expired at or before now.
	n, err := st.PruneAuthorizations(ctx, base.Add(time.Second))
	must(t, err)
	if n != 2 {
		t.Fatalf("PruneAuthorizations deleted %d, want 2", n)
	}
	l, _, err := st.LiveAuthorizations(ctx, env, "", base)
	must(t, err)
	if l != 1 {
		t.Fatalf("after the prune %d authorizations live, want 1", l)
	}
	n, err = st.PruneAuthorizations(ctx, base.Add(2*time.Second))
	must(t, err)
	if n != 1 {
		t.Fatalf("second PruneAuthorizations deleted %d, want 1", n)
	}
}

// keyBase returns a random signing-key id base in a negative range nothing else uses.
func keyBase() int64 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return -(1 << 40) - int64(binary.BigEndian.Uint32(b[:]))*16
}

func conformSigningKeys(t *testing.T, st server.Store) {
	ctx := context.Background()
	base := keyBase()
	for i := range int64(3) {
		k := []byte{byte(i), 1, 2, 3}
		got, err := st.EnsureSigningKey(ctx, base+i, k, conformNow)
		must(t, err)
		if !bytes.Equal(got, k) {
			t.Fatalf("EnsureSigningKey(%d) = %x, want %x", i, got, k)
		}
	}
	// A second key under an existing id loses: the stored one is returned.
	got, err := st.EnsureSigningKey(ctx, base+1, []byte("other"), conformNow)
	must(t, err)
	if !bytes.Equal(got, []byte{1, 1, 2, 3}) {
		t.Fatalf("EnsureSigningKey of an existing id = %x, want the stored key", got)
	}
	ids := func(minID int64) []int64 {
		t.Helper()
		keys, err := st.SigningKeys(ctx, minID)
		must(t, err)
		var in []int64 // ids of this case's keys; the database may hold others
		for _, k := range keys {
			if k.ID < base || k.ID >= base+3 {
				continue
			}
			if !bytes.Equal(k.Key, []byte{byte(k.ID - base), 1, 2, 3}) {
				t.Fatalf("SigningKeys: key %d = %x", k.ID, k.Key)
			}
			in = append(in, k.ID)
		}
		return in
	}
	if g := ids(base); !equalIDs(g, []int64{base, base + 1, base + 2}) {
		t.Fatalf("SigningKeys(base) ids = %v", g)
	}
	if g := ids(base + 1); !equalIDs(g, []int64{base + 1, base + 2}) {
		t.Fatalf("SigningKeys(base+1) ids = %v", g)
	}
	must(t, st.PruneSigningKeys(ctx, base+2))
	if g := ids(base); !equalIDs(g, []int64{base + 2}) {
		t.Fatalf("after PruneSigningKeys(base+2) ids = %v", g)
	}
	must(t, st.PruneSigningKeys(ctx, base+3))
}

func equalIDs(a, b []int64) bool {
	sort.Slice(a, func(i, j int) bool { return a[i] < a[j] })
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func conformSigningKeyConcurrent(t *testing.T, st server.Store) {
	ctx := context.Background()
	id := keyBase()
	t.Cleanup(func() { _ = st.PruneSigningKeys(context.Background(), id+1) })
	const n = 6
	got := make([][]byte, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for attempt := 0; attempt < 20; attempt++ {
				k, err := st.EnsureSigningKey(ctx, id, []byte{byte(i)}, conformNow)
				if errors.Is(err, server.ErrConflict) {
					continue
				}
				if err != nil {
					t.Error(err)
				}
				got[i] = k
				return
			}
			t.Error("EnsureSigningKey kept conflicting")
		})
	}
	wg.Wait()
	for i := 1; i < n; i++ {
		if !bytes.Equal(got[i], got[0]) {
			t.Fatalf("concurrent EnsureSigningKey calls disagree: %x vs %x", got[i], got[0])
		}
	}
}

func conformNodeLeases(t *testing.T, st server.Store) {
	ctx := context.Background()
	node := uniqueEnv("conf-node")
	first := server.NodeLease{NodeID: node, Instance: "inst-1", AdvertiseURL: "http://127.0.0.1:1", LeaseUntil: conformNow.Add(time.Minute)}
	t.Cleanup(func() { _ = st.ReleaseNode(context.Background(), first) })
	must(t, st.ClaimNode(ctx, first))
	first.LeaseUntil = first.LeaseUntil.Add(time.Minute)
	ok, err := st.RenewNode(ctx, first)
	expect(t, ok, err, true, "RenewNode of the claiming process failed")
	// A restart claims the node id over at once; the old process can no longer renew.
	second := server.NodeLease{NodeID: node, Instance: "inst-2", AdvertiseURL: "http://127.0.0.1:2", LeaseUntil: conformNow.Add(time.Minute)}
	t.Cleanup(func() { _ = st.ReleaseNode(context.Background(), second) })
	must(t, st.ClaimNode(ctx, second))
	ok, err = st.RenewNode(ctx, first)
	expect(t, ok, err, false, "RenewNode of a replaced process succeeded")
	ok, err = st.RenewNode(ctx, server.NodeLease{NodeID: uniqueEnv("conf-node"), Instance: "x", LeaseUntil: conformNow})
	expect(t, ok, err, false, "RenewNode of an unclaimed node id succeeded")
	// Releasing the replaced process leaves the live one.
	env := uniqueEnv("conf-node-env")
	must(t, st.SetLocation(ctx, server.Location{EnvironmentID: env, NodeID: node, Instance: "inst-2", SocketID: "s-1", Generation: 1}))
	must(t, st.ReleaseNode(ctx, first))
	l, err := st.Location(ctx, env, conformNow)
	must(t, err)
	if l.AdvertiseURL != second.AdvertiseURL || l.Instance != "inst-2" {
		t.Fatalf("Location after releasing the old process = %+v", l)
	}
	// Releasing the live one drops its lease and its locations.
	must(t, st.ReleaseNode(ctx, second))
	if _, err := st.Location(ctx, env, conformNow); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("Location after ReleaseNode: %v, want ErrNotFound", err)
	}
	m, err := st.LocationsOf(ctx, second)
	must(t, err)
	if len(m) != 0 {
		t.Fatalf("LocationsOf a released process = %v", m)
	}
	ok, err = st.RenewNode(ctx, second)
	expect(t, ok, err, false, "RenewNode after ReleaseNode succeeded")
}

func conformLocations(t *testing.T, st server.Store) {
	ctx := context.Background()
	node := uniqueEnv("conf-loc")
	lease := server.NodeLease{NodeID: node, Instance: "inst-1", AdvertiseURL: "http://127.0.0.1:9", LeaseUntil: conformNow.Add(time.Minute)}
	t.Cleanup(func() { _ = st.ReleaseNode(context.Background(), lease) })
	must(t, st.ClaimNode(ctx, lease))
	env, env2 := uniqueEnv("conf-loc-env"), uniqueEnv("conf-loc-env")
	if _, err := st.Location(ctx, env, conformNow); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("Location of an unrecorded environment: %v, want ErrNotFound", err)
	}
	set := func(env, sock string, gen int64) {
		t.Helper()
		must(t, st.SetLocation(ctx, server.Location{EnvironmentID: env, NodeID: node, Instance: "inst-1", SocketID: sock, Generation: gen}))
	}
	set(env, "s-2", 2)
	set(env2, "s-9", 1)
	// An older generation does not replace a newer one; the same or a newer does.
	set(env, "s-1", 1)
	l, err := st.Location(ctx, env, conformNow)
	must(t, err)
	want := server.Location{EnvironmentID: env, NodeID: node, Instance: "inst-1", SocketID: "s-2", Generation: 2, AdvertiseURL: lease.AdvertiseURL}
	if l != want {
		t.Fatalf("Location = %+v, want %+v", l, want)
	}
	set(env, "s-3", 2)
	set(env, "s-4", 3)
	l, err = st.Location(ctx, env, conformNow)
	must(t, err)
	if l.SocketID != "s-4" || l.Generation != 3 {
		t.Fatalf("Location after newer generations = %+v", l)
	}
	m, err := st.LocationsOf(ctx, lease)
	must(t, err)
	if len(m) != 2 || m[env] != "s-4" || m[env2] != "s-9" {
		t.Fatalf("LocationsOf = %v", m)
	}
	// The location stands only while the node's lease does (exclusive).
	if _, err := st.Location(ctx, env, lease.LeaseUntil); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("Location at the lease's end: %v, want ErrNotFound", err)
	}
	// ClearLocation deletes only the named socket's location.
	must(t, st.ClearLocation(ctx, env, "s-3"))
	if _, err := st.Location(ctx, env, conformNow); err != nil {
		t.Fatalf("ClearLocation of another socket cleared the location: %v", err)
	}
	must(t, st.ClearLocation(ctx, env, "s-4"))
	if _, err := st.Location(ctx, env, conformNow); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("Location after ClearLocation: %v, want ErrNotFound", err)
	}
	// A location recorded by another process of the node id is not handed out.
	other := uniqueEnv("conf-loc-env")
	must(t, st.SetLocation(ctx, server.Location{EnvironmentID: other, NodeID: node, Instance: "inst-0", SocketID: "s-0", Generation: 1}))
	if _, err := st.Location(ctx, other, conformNow); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("Location recorded by a stale instance: %v, want ErrNotFound", err)
	}
	must(t, st.ClearLocation(ctx, other, "s-0"))
}

func conformRegisterConcurrent(t *testing.T, st server.Store) {
	ctx := context.Background()
	env := uniqueEnv("conf-reg-race")
	const n = 6
	gens := make([]int64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for attempt := 0; attempt < 50; attempt++ {
				r, err := st.Register(ctx, env, "reg", []byte("k"), hash("e"), conformNow)
				if errors.Is(err, server.ErrConflict) {
					time.Sleep(time.Millisecond)
					continue
				}
				if err != nil {
					t.Error(err)
				}
				gens[i] = r.Generation
				return
			}
			t.Error("Register kept conflicting")
		})
	}
	wg.Wait()
	sort.Slice(gens, func(i, j int) bool { return gens[i] < gens[j] })
	for i, g := range gens {
		if g != int64(i+1) {
			t.Fatalf("concurrent registrations got generations %v, want 1..%d each once", gens, n)
		}
	}
}

func conformCanceledContext(t *testing.T, st server.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := st.Register(ctx, uniqueEnv("conf-ctx"), "reg", []byte("k"), hash("e"), conformNow); err == nil {
		t.Fatal("Register with a canceled context succeeded")
	}
	if _, err := st.Registration(ctx, uniqueEnv("conf-ctx")); err == nil || errors.Is(err, server.ErrNotFound) {
		t.Fatalf("Registration with a canceled context: %v, want a context error", err)
	}
}

// conformClosed: after Close every method fails with an error (never ErrNotFound, never a
// panic), and a second Close does not panic.
func conformClosed(t *testing.T, st server.Store) {
	ctx := context.Background()
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := st.Registration(ctx, uniqueEnv("conf-closed")); err == nil || errors.Is(err, server.ErrNotFound) {
		t.Errorf("Registration after Close: %v, want an error other than ErrNotFound", err)
	}
	if _, err := st.Register(ctx, uniqueEnv("conf-closed"), "reg", []byte("k"), hash("e"), conformNow); err == nil {
		t.Error("Register after Close succeeded")
	}
	if _, err := st.SigningKeys(ctx, 0); err == nil {
		t.Error("SigningKeys after Close succeeded")
	}
	_ = st.Close()
}
