package server

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"
)

// dialect is the SQL flavour of a sqlStore: the schema and statements are shared; only
// placeholders and error classification differ.
type dialect int

const (
	dialectSQLite dialect = iota
	dialectPostgres
)

// sqlStore implements Store on database/sql for SQLite (modernc.org/sqlite, pure Go) and
// PostgreSQL (jackc/pgx/v5).
type sqlStore struct {
	db      *sql.DB
	dialect dialect
}

// OpenStore opens (and migrates) the store named by dsn: "postgres://…" or
// "postgresql://…" selects PostgreSQL, anything else is a SQLite file path ("" is refused;
// ":memory:" is an in-memory database for tests).
func OpenStore(ctx context.Context, dsn string) (Store, error) {
	if dsn == "" {
		return nil, errors.New("opening registry store: empty database path")
	}
	s := &sqlStore{}
	var err error
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		s.dialect = dialectPostgres
		s.db, err = sql.Open("pgx", dsn)
		if err == nil {
			s.db.SetMaxOpenConns(MaxStoreConns)
		}
	} else {
		s.dialect = dialectSQLite
		if err := createPrivate(dsn); err != nil {
			return nil, err
		}
		// One connection: SQLite serialises writers anyway, and a single connection keeps
		// ":memory:" one database. busy_timeout covers other processes on the same file.
		s.db, err = sql.Open("sqlite", "file:"+dsn+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
		if err == nil {
			s.db.SetMaxOpenConns(1)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("opening registry store: %w", err)
	}
	if err := s.migrate(ctx); err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}

// StoreFileMode is the mode of a SQLite store file, and of its -wal and -shm files: they
// hold the URL signing keys (signing_keys), with which anyone can mint rendezvous URLs, so
// only the registry's user may read them.
const StoreFileMode = 0o600

// createPrivate creates the SQLite file at path with StoreFileMode unless it exists (an
// existing file keeps its mode; registry start-up warns when it is group- or
// other-readable). The mode is set explicitly, whatever the umask. SQLite then gives the
// -wal and -shm files it creates the main file's mode (its unix VFS does so explicitly,
// umask aside; TestOpenStore_FileModes checks it), so they are private too.
// ":memory:" is left alone.
func createPrivate(path string) error {
	if path == ":memory:" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, StoreFileMode)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating registry store: %w", err)
	}
	err = f.Chmod(StoreFileMode)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("creating registry store: %w", err)
	}
	return nil
}

// q rewrites the shared statements' $N placeholders for SQLite (?NNN).
func (s *sqlStore) q(stmt string) string {
	if s.dialect == dialectPostgres {
		return stmt
	}
	return strings.ReplaceAll(stmt, "$", "?")
}

func (s *sqlStore) Close() error { return s.db.Close() }

func (s *sqlStore) Register(ctx context.Context, env, regID string, key []byte, exitTokenHash [32]byte, now time.Time) (Registration, error) {
	var gen int64
	err := s.db.QueryRowContext(ctx, s.q(`
INSERT INTO registrations (environment_id, registration_id, generation, executor_public_key, created_at, exit_token_hash, exited_at)
VALUES ($1, $2, 1, $3, $4, $5, NULL)
ON CONFLICT (environment_id) DO UPDATE SET
  registration_id = excluded.registration_id,
  generation = registrations.generation + 1,
  executor_public_key = excluded.executor_public_key,
  created_at = excluded.created_at,
  exit_token_hash = excluded.exit_token_hash,
  exited_at = NULL
RETURNING generation`), env, regID, string(key), now.UnixMilli(), hex.EncodeToString(exitTokenHash[:])).Scan(&gen)
	if err != nil {
		return Registration{}, s.classify("registering", err)
	}
	return Registration{EnvironmentID: env, RegistrationID: regID, Generation: gen, ExecutorPublicKey: key, CreatedAt: time.UnixMilli(now.UnixMilli())}, nil
}

func (s *sqlStore) Registration(ctx context.Context, env string) (Registration, error) {
	r := Registration{EnvironmentID: env}
	var key string
	var created int64
	var exited sql.NullInt64
	err := s.db.QueryRowContext(ctx, s.q(`
SELECT registration_id, generation, executor_public_key, created_at, exited_at FROM registrations WHERE environment_id = $1`), env).
		Scan(&r.RegistrationID, &r.Generation, &key, &created, &exited)
	if errors.Is(err, sql.ErrNoRows) {
		return Registration{}, ErrNotFound
	}
	if err != nil {
		return Registration{}, s.classify("reading registration", err)
	}
	r.ExecutorPublicKey = []byte(key)
	r.CreatedAt = time.UnixMilli(created)
	if exited.Valid {
		r.ExitedAt = time.UnixMilli(exited.Int64)
	}
	return r, nil
}

func (s *sqlStore) MarkExited(ctx context.Context, env, regID string, exitTokenHash [32]byte, now time.Time) (bool, error) {
	return s.updateOne(ctx, "recording executor exit", `
UPDATE registrations SET exited_at = $1
WHERE environment_id = $2 AND registration_id = $3 AND exit_token_hash = $4 AND exited_at IS NULL`,
		now.UnixMilli(), env, regID, hex.EncodeToString(exitTokenHash[:]))
}

func (s *sqlStore) IssueAuthorization(ctx context.Context, a Authorization) error {
	_, err := s.db.ExecContext(ctx, s.q(`
INSERT INTO harness_authorizations (token_hash, environment_id, registration_id, harness_key_hash, expires_at, issued_to)
VALUES ($1, $2, $3, $4, $5, $6)`),
		hex.EncodeToString(a.TokenHash[:]), a.EnvironmentID, a.RegistrationID, hex.EncodeToString(a.HarnessKeyHash[:]), a.ExpiresAt.UnixMilli(), a.TokenID)
	if err != nil {
		return s.classify("issuing authorization", err)
	}
	return nil
}

func (s *sqlStore) LiveAuthorizations(ctx context.Context, env, tokenID string, now time.Time) (live, token int, err error) {
	err = s.db.QueryRowContext(ctx, s.q(`
SELECT COUNT(*), COALESCE(SUM(CASE WHEN issued_to = $3 THEN 1 ELSE 0 END), 0)
FROM harness_authorizations WHERE environment_id = $1 AND used_at IS NULL AND expires_at > $2`),
		env, now.UnixMilli(), tokenID).Scan(&live, &token)
	if err != nil {
		return 0, 0, s.classify("counting authorizations", err)
	}
	return live, token, nil
}

func (s *sqlStore) ConsumeAuthorization(ctx context.Context, token [32]byte, env, regID string, key [32]byte, now time.Time) (bool, error) {
	return s.updateOne(ctx, "consuming authorization", `
UPDATE harness_authorizations SET used_at = $1
WHERE token_hash = $2 AND used_at IS NULL AND expires_at > $1
  AND environment_id = $3 AND registration_id = $4 AND harness_key_hash = $5`,
		now.UnixMilli(), hex.EncodeToString(token[:]), env, regID, hex.EncodeToString(key[:]))
}

func (s *sqlStore) PruneAuthorizations(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.q(`DELETE FROM harness_authorizations WHERE expires_at <= $1`), now.UnixMilli())
	if err != nil {
		return 0, s.classify("pruning authorizations", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// updateOne runs query, an UPDATE that matches at most one row, and reports whether it
// changed one; what is the error context.
func (s *sqlStore) updateOne(ctx context.Context, what, query string, args ...any) (bool, error) {
	res, err := s.db.ExecContext(ctx, s.q(query), args...)
	if err != nil {
		return false, s.classify(what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, s.classify(what, err)
	}
	return n == 1, nil
}

// classify wraps err with context, marking lock and serialization conflicts ErrConflict.
func (s *sqlStore) classify(what string, err error) error {
	msg := err.Error()
	conflict := false
	switch s.dialect {
	case dialectSQLite:
		conflict = strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked")
	case dialectPostgres:
		// 40001 serialization_failure, 40P01 deadlock_detected.
		conflict = strings.Contains(msg, "SQLSTATE 40001") || strings.Contains(msg, "SQLSTATE 40P01")
	}
	if conflict {
		return fmt.Errorf("%s: %w: %w", what, ErrConflict, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// migrations are applied in order, each once, recorded in schema_migrations. The same text
// runs on SQLite and PostgreSQL (BIGINT and TEXT mean the same to both here).
var migrations = []string{
	1: `
CREATE TABLE registrations (
  environment_id      TEXT PRIMARY KEY,
  registration_id     TEXT NOT NULL,
  generation          BIGINT NOT NULL,
  executor_public_key TEXT NOT NULL,
  created_at          BIGINT NOT NULL
);
CREATE TABLE harness_authorizations (
  token_hash       TEXT PRIMARY KEY,
  environment_id   TEXT NOT NULL,
  registration_id  TEXT NOT NULL,
  harness_key_hash TEXT NOT NULL,
  expires_at       BIGINT NOT NULL,
  used_at          BIGINT
);
CREATE INDEX harness_authorizations_env ON harness_authorizations (environment_id, expires_at);
CREATE INDEX harness_authorizations_expiry ON harness_authorizations (expires_at);
`,
	// 2: the TokenID of the bearer that called connect, for the per-token bound (security
	// issue 13). Rows issued before it count for no token.
	2: `
ALTER TABLE harness_authorizations ADD COLUMN issued_to TEXT NOT NULL DEFAULT '';
`,
	// 3: scale-out (issue 17): URL signing keys shared by every node and kept across
	// restarts, node leases, and where each environment's executor socket is attached.
	3: `
CREATE TABLE signing_keys (
  id         BIGINT PRIMARY KEY,
  secret     TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE TABLE registry_nodes (
  node_id       TEXT PRIMARY KEY,
  instance      TEXT NOT NULL,
  advertise_url TEXT NOT NULL,
  lease_until   BIGINT NOT NULL
);
CREATE TABLE executor_locations (
  environment_id TEXT PRIMARY KEY,
  node_id        TEXT NOT NULL,
  instance       TEXT NOT NULL,
  socket_id      TEXT NOT NULL,
  generation     BIGINT NOT NULL,
  attached_at    BIGINT NOT NULL
);
CREATE INDEX executor_locations_node ON executor_locations (node_id, instance);
`,
	// 4: exit notices (issue 14, docs/reliability.md §5): the SHA-256 of each
	// registration's one-shot exit token ('' for registrations made before: they can
	// never be marked), and when its executor reported its exit.
	4: `
ALTER TABLE registrations ADD COLUMN exit_token_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE registrations ADD COLUMN exited_at BIGINT;
`,
}

// migrate creates schema_migrations and applies every missing migration in its own
// transaction. Concurrent migrators on PostgreSQL are serialised by an advisory lock.
func (s *sqlStore) migrate(ctx context.Context) error {
	if s.dialect == dialectPostgres {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("migrating registry store: %w", err)
		}
		defer conn.Close()
		const lockKey = 0x65786563 // "exec"
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, lockKey); err != nil {
			return fmt.Errorf("migrating registry store: locking: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lockKey)
	}
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("migrating registry store: %w", err)
	}
	var have int64
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
		return fmt.Errorf("migrating registry store: %w", err)
	}
	for v := int(have) + 1; v < len(migrations); v++ {
		if err := s.apply(ctx, v); err != nil {
			return fmt.Errorf("migrating registry store to version %d: %w", v, err)
		}
	}
	return nil
}

func (s *sqlStore) apply(ctx context.Context, v int) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, stmt := range strings.Split(migrations[v], ";") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)`),
		int64(v), time.Now().UnixMilli()); err != nil {
		return err
	}
	return tx.Commit()
}
