package server

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/execlab/executor/registry/rendezvous"
)

// The scale-out half of sqlStore (migration 3). Times are Unix milliseconds, as elsewhere.

func (s *sqlStore) EnsureSigningKey(ctx context.Context, id int64, key []byte, now time.Time) ([]byte, error) {
	if _, err := s.db.ExecContext(ctx, s.q(`
INSERT INTO signing_keys (id, secret, created_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`),
		id, hex.EncodeToString(key), now.UnixMilli()); err != nil {
		return nil, s.classify("storing signing key", err)
	}
	var secret string
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT secret FROM signing_keys WHERE id = $1`), id).Scan(&secret); err != nil {
		return nil, s.classify("reading signing key", err)
	}
	b, err := hex.DecodeString(secret)
	if err != nil {
		return nil, fmt.Errorf("reading signing key %d: malformed secret", id)
	}
	return b, nil
}

func (s *sqlStore) SigningKeys(ctx context.Context, minID int64) ([]rendezvous.SigningKey, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id, secret FROM signing_keys WHERE id >= $1 ORDER BY id`), minID)
	if err != nil {
		return nil, s.classify("reading signing keys", err)
	}
	defer rows.Close()
	var keys []rendezvous.SigningKey
	for rows.Next() {
		var k rendezvous.SigningKey
		var secret string
		if err := rows.Scan(&k.ID, &secret); err != nil {
			return nil, s.classify("reading signing keys", err)
		}
		if k.Key, err = hex.DecodeString(secret); err != nil {
			return nil, fmt.Errorf("reading signing key %d: malformed secret", k.ID)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, s.classify("reading signing keys", err)
	}
	return keys, nil
}

func (s *sqlStore) PruneSigningKeys(ctx context.Context, minID int64) error {
	if _, err := s.db.ExecContext(ctx, s.q(`DELETE FROM signing_keys WHERE id < $1`), minID); err != nil {
		return s.classify("pruning signing keys", err)
	}
	return nil
}

func (s *sqlStore) ClaimNode(ctx context.Context, n NodeLease) error {
	if _, err := s.db.ExecContext(ctx, s.q(`
INSERT INTO registry_nodes (node_id, instance, advertise_url, lease_until) VALUES ($1, $2, $3, $4)
ON CONFLICT (node_id) DO UPDATE SET instance = excluded.instance, advertise_url = excluded.advertise_url,
  lease_until = excluded.lease_until`),
		n.NodeID, n.Instance, n.AdvertiseURL, n.LeaseUntil.UnixMilli()); err != nil {
		return s.classify("claiming node id", err)
	}
	return nil
}

func (s *sqlStore) RenewNode(ctx context.Context, n NodeLease) (bool, error) {
	return s.updateOne(ctx, "renewing node lease", `
UPDATE registry_nodes SET lease_until = $3, advertise_url = $4 WHERE node_id = $1 AND instance = $2`,
		n.NodeID, n.Instance, n.LeaseUntil.UnixMilli(), n.AdvertiseURL)
}

func (s *sqlStore) ReleaseNode(ctx context.Context, n NodeLease) error {
	if _, err := s.db.ExecContext(ctx, s.q(`DELETE FROM executor_locations WHERE node_id = $1 AND instance = $2`),
		n.NodeID, n.Instance); err != nil {
		return s.classify("releasing node locations", err)
	}
	if _, err := s.db.ExecContext(ctx, s.q(`DELETE FROM registry_nodes WHERE node_id = $1 AND instance = $2`),
		n.NodeID, n.Instance); err != nil {
		return s.classify("releasing node lease", err)
	}
	return nil
}

func (s *sqlStore) SetLocation(ctx context.Context, l Location) error {
	if _, err := s.db.ExecContext(ctx, s.q(`
INSERT INTO executor_locations (environment_id, node_id, instance, socket_id, generation, attached_at)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (environment_id) DO UPDATE SET node_id = excluded.node_id, instance = excluded.instance,
  socket_id = excluded.socket_id, generation = excluded.generation, attached_at = excluded.attached_at
WHERE executor_locations.generation <= excluded.generation`),
		l.EnvironmentID, l.NodeID, l.Instance, l.SocketID, l.Generation, time.Now().UnixMilli()); err != nil {
		return s.classify("recording executor location", err)
	}
	return nil
}

func (s *sqlStore) ClearLocation(ctx context.Context, env, socketID string) error {
	if _, err := s.db.ExecContext(ctx, s.q(`DELETE FROM executor_locations WHERE environment_id = $1 AND socket_id = $2`),
		env, socketID); err != nil {
		return s.classify("clearing executor location", err)
	}
	return nil
}

func (s *sqlStore) Location(ctx context.Context, env string, now time.Time) (Location, error) {
	l := Location{EnvironmentID: env}
	err := s.db.QueryRowContext(ctx, s.q(`
SELECT l.node_id, l.instance, l.socket_id, l.generation, n.advertise_url
FROM executor_locations l JOIN registry_nodes n ON n.node_id = l.node_id AND n.instance = l.instance
WHERE l.environment_id = $1 AND n.lease_until > $2`), env, now.UnixMilli()).
		Scan(&l.NodeID, &l.Instance, &l.SocketID, &l.Generation, &l.AdvertiseURL)
	if errors.Is(err, sql.ErrNoRows) {
		return Location{}, ErrNotFound
	}
	if err != nil {
		return Location{}, s.classify("reading executor location", err)
	}
	return l, nil
}

func (s *sqlStore) LocationsOf(ctx context.Context, n NodeLease) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT environment_id, socket_id FROM executor_locations WHERE node_id = $1 AND instance = $2`),
		n.NodeID, n.Instance)
	if err != nil {
		return nil, s.classify("reading node locations", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var env, sock string
		if err := rows.Scan(&env, &sock); err != nil {
			return nil, s.classify("reading node locations", err)
		}
		out[env] = sock
	}
	if err := rows.Err(); err != nil {
		return nil, s.classify("reading node locations", err)
	}
	return out, nil
}
