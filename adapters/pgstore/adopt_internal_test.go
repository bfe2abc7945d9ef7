package pgstore

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// TestAdoptFromVersion1: a schema written by the version of this package
// before the approvals' state existed (schema version 1: approvals and v1
// audit records, MACed, no sets, no head MAC) is migrated and adopted by
// Open: every approval that authenticates is held, a forged one is not
// (List names it as before), the v1 audit records still verify and new
// records chain after them. Once an audit record of version 2 exists,
// removing the head's state never leads to a second adoption.
func TestAdoptFromVersion1(t *testing.T) {
	dsn := os.Getenv("MCPWARD_PGSTORE_TEST_DSN") // set by TestMain once the cluster is up
	if dsn == "" {
		t.Skip("no PostgreSQL")
	}
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	schema := fmt.Sprintf("v1_%d", time.Now().UnixNano())
	tb := func(name string) string { return pgx.Identifier{schema, name}.Sanitize() }
	exec := func(q string, args ...any) {
		t.Helper()
		_, err := conn.Exec(ctx, q, args...)
		require.NoError(t, err, q)
	}

	// Schema version 1, as its migration left it.
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	for _, q := range []string{
		`CREATE SCHEMA ` + schema,
		`CREATE TABLE ` + tb("schema_migrations") + ` (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
		`SET LOCAL search_path TO ` + schema,
		migrations()[0].sql,
		`INSERT INTO ` + tb("schema_migrations") + ` (version) VALUES (1)`,
	} {
		_, err := tx.Exec(ctx, q)
		require.NoError(t, err)
	}
	require.NoError(t, tx.Commit(ctx))

	key := make([]byte, KeyLen)
	for i := range key {
		key[i] = byte(3 * i)
	}
	ring, err := NewKeyring("k1", map[string][]byte{"k1": key})
	require.NoError(t, err)
	sl, err := derive("k1", key)
	require.NoError(t, err)
	exec(`INSERT INTO `+tb("keys")+` (key_id, check_value) VALUES ('k1', $1)`, sl.check)

	id := func(origin, server string) ports.Identity {
		return ports.Identity{ServerID: server, Tier: ports.TierProject, Origin: origin, Fingerprint: "ab", Security: "cmd",
			Repository: "repo", Generation: "g"}
	}
	grantedAt := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	insert := func(a ports.Approval, mac func(idHash, record []byte) []byte) {
		record, idHash := encodeApproval(a), identityHash(a.Identity)
		exec(`INSERT INTO `+tb("approvals")+` (id_hash, server_hash, seq, record, key_id, mac) VALUES ($1, $2, nextval('`+tb("approvals_seq")+`'), $3, 'k1', $4)`,
			idHash, serverHash(a.Identity.ServerID), record, mac(idHash, record))
	}
	good := func(idHash, record []byte) []byte { return approvalMAC(sl, idHash, record) }
	insert(ports.Approval{Identity: id("/a", "srv"), GrantedAt: grantedAt, GrantedBy: "v1"}, good)
	insert(ports.Approval{Identity: id("/b", "srv"), GrantedAt: grantedAt, GrantedBy: "v1"}, good)
	insert(ports.Approval{Identity: id("/c", "forged"), GrantedAt: grantedAt}, func(_, _ []byte) []byte { return make([]byte, 32) })
	prev := make([]byte, 32)
	for i := int64(1); i <= 2; i++ {
		rec := encodeRecord(ports.AuditRecord{Action: ports.AuditGrant, Reason: fmt.Sprint(i)})
		m := auditMAC(sl, prev, i, rec)
		exec(`INSERT INTO `+tb("audit")+` (seq, record, key_id, mac) VALUES ($1, $2, 'k1', $3)`, i, rec, m)
		prev = m
	}
	exec(`UPDATE `+tb("audit_head")+` SET seq = 2, mac = $1`, prev)

	open := func() *Store {
		t.Helper()
		s, err := Open(ctx, dsn, Options{Keyring: ring, Schema: schema, MaxConns: 1})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	s := open()
	assert.Equal(t, 2, SchemaVersion())
	list, err := s.List(ctx, "srv")
	require.NoError(t, err, "the approvals of version 1 are adopted")
	require.Len(t, list, 2)
	assert.Equal(t, "v1", list[0].GrantedBy)
	_, err = s.List(ctx, "forged")
	assert.Equal(t, ReasonCorrupt, refusal.ReasonOf(err), "a forged row is not adopted: it fails as it did")
	recs, err := s.Records(ctx)
	require.NoError(t, err, "the records of version 1 verify")
	assert.Len(t, recs, 2)
	require.NoError(t, s.Append(ctx, ports.AuditRecord{Action: ports.AuditDecide}))
	recs, err = s.Records(ctx)
	require.NoError(t, err, "a record of version 2 chains after them")
	assert.Len(t, recs, 3)
	require.NoError(t, s.Revoke(ctx, id("/a", "srv")))
	list, err = open().List(ctx, "srv")
	require.NoError(t, err)
	assert.Len(t, list, 1)

	// The head's state removed: no second adoption.
	exec(`UPDATE ` + tb("audit_head") + ` SET approvals_seq = NULL, approvals_digest = NULL, key_id = NULL, head_mac = NULL`)
	_, err = open().List(ctx, "srv")
	assert.Equal(t, ReasonRolledBack, refusal.ReasonOf(err))
}
