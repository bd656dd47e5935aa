package registrytest

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
)

// PostgresDSNEnv names the DSN of a disposable PostgreSQL server for tests; CI (.ci/run)
// starts a cluster on loopback and sets it.
const PostgresDSNEnv = "EXECUTOR_TEST_POSTGRES_DSN"

// PostgresDSN returns $EXECUTOR_TEST_POSTGRES_DSN. Unset, it fails tb under CI=true (CI
// runs every PostgreSQL test) and returns "" elsewhere, for the caller to skip or to run
// SQLite only.
func PostgresDSN(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv(PostgresDSNEnv)
	if dsn == "" && os.Getenv("CI") == "true" {
		tb.Fatalf("%s is unset under CI=true: the PostgreSQL tests must run", PostgresDSNEnv)
	}
	return dsn
}

// FreshPostgres creates a database named prefix + 12 random hex digits on the server of
// base (a DSN), dropped at tb's cleanup, and returns its DSN: a store no other test
// shares, for state that is global to a database (signing keys, node leases).
func FreshPostgres(tb testing.TB, base, prefix string) string {
	tb.Helper()
	admin, err := sql.Open("pgx", base) // the driver registry/server registers
	if err != nil {
		tb.Fatal(err)
	}
	defer admin.Close()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := prefix + hex.EncodeToString(b[:])
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		tb.Fatalf("creating database: %v", err)
	}
	tb.Cleanup(func() {
		if a, err := sql.Open("pgx", base); err == nil {
			_, _ = a.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
			a.Close()
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
