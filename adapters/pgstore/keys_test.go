package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/pgstore"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

func ring(t testing.TB, current string, keys map[string][]byte) pgstore.Keyring {
	t.Helper()
	k, err := pgstore.NewKeyring(current, keys)
	require.NoError(t, err)
	return k
}

var (
	grantedID = ports.Identity{
		ServerID: "srv", Tier: ports.TierProject, Origin: "/work/repo/.mcp.json",
		Fingerprint: "4f2a", Security: "https://mcp.example.com:443/mcp",
		Repository: "https://github.com/example/repo.git", Generation: "gen-1",
	}
	at = time.Date(2025, 3, 4, 5, 6, 7, 890123456, time.UTC)
)

// fill writes two tokens, an approval and three audit records.
func fill(t *testing.T, s *pgstore.Store) {
	t.Helper()
	ctx := t.Context()
	require.NoError(t, s.Set(ctx, "a", []byte("token a")))
	require.NoError(t, s.Set(ctx, "b", []byte("token b")))
	require.NoError(t, s.Grant(ctx, ports.Approval{Identity: grantedID, GrantedAt: at, GrantedBy: "cli"}))
	for i := range 3 {
		require.NoError(t, s.Append(ctx, ports.AuditRecord{
			Time: at.Add(time.Duration(i) * time.Second), Action: ports.AuditDecide,
			Identity: grantedID, Outcome: "allowed", Reason: "approved", Actor: "host",
		}))
	}
}

// TestTokensEncryptedAtRest: the value is nowhere in the row.
func TestTokensEncryptedAtRest(t *testing.T) {
	schema := newSchema()
	s := openStore(t, schema, nil)
	secret := []byte("refresh-token-that-must-not-be-readable-in-the-database")
	require.NoError(t, s.Set(t.Context(), "k", secret))
	var row string
	require.NoError(t, admin(t).QueryRow(t.Context(), `SELECT to_jsonb(x)::text FROM `+table(schema, "tokens")+` x`).Scan(&row))
	assert.NotContains(t, row, string(secret))
	assert.NotContains(t, row, "7265667265736800", "nor its hex")
}

// TestWrongKey: a host started with a wrong key is refused at Open
// (store_key_mismatch), writing nothing; with the right current key but a
// wrong old key, every row under the old key is unreadable, named, and
// nothing is overwritten — not by Set, Grant or Rekey.
func TestWrongKey(t *testing.T) {
	schema := newSchema()
	ctx := t.Context()
	s := openStore(t, schema, nil)
	fill(t, s)
	require.NoError(t, s.Close())
	before := snapshot(t, schema)

	wrong := testKey(99)
	_, err := pgstore.Open(ctx, testDSN, pgstore.Options{Schema: schema, Keyring: ring(t, "k1", map[string][]byte{"k1": wrong})})
	requireReason(t, err, pgstore.ReasonKeyMismatch, refusal.Config, ports.ErrCorrupt, "Open with a wrong current key")
	assert.Equal(t, before, snapshot(t, schema), "a refused Open writes nothing")

	s2 := openStore(t, schema, ring(t, "k2", map[string][]byte{"k1": wrong, "k2": testKey(2)}))
	for _, k := range []string{"a", "b"} {
		_, err := s2.Get(ctx, k)
		requireReason(t, err, pgstore.ReasonKeyMismatch, refusal.Config, ports.ErrCorrupt, "Get(%s) under a wrong old key", k)
		requireReason(t, s2.Set(ctx, k, []byte("overwrite")), pgstore.ReasonKeyMismatch, refusal.Config, ports.ErrCorrupt,
			"Set(%s) over a row it cannot open", k)
	}
	_, err = s2.List(ctx, "srv")
	requireReason(t, err, pgstore.ReasonKeyMismatch, refusal.Config, ports.ErrCorrupt, "List")
	requireReason(t, s2.Grant(ctx, ports.Approval{Identity: grantedID, GrantedAt: at}), pgstore.ReasonKeyMismatch, refusal.Config, ports.ErrCorrupt, "Grant over it")
	_, err = s2.Records(ctx)
	requireReason(t, err, pgstore.ReasonKeyMismatch, refusal.Config, ports.ErrCorrupt, "Records")
	rep, err := s2.Rekey(ctx)
	requireReason(t, err, pgstore.ReasonKeyMismatch, refusal.Config, ports.ErrCorrupt, "Rekey")
	assert.Equal(t, 3, rep.Unreadable)
	assert.Zero(t, rep.Tokens+rep.Approvals+rep.AuditRecords)

	// Only the new key's check value was added: the rows are as they were.
	after := snapshot(t, schema)
	s3 := openStore(t, schema, nil)
	v, err := s3.Get(ctx, "a")
	require.NoError(t, err, "the right key still opens everything")
	assert.Equal(t, "token a", string(v))
	recs, err := s3.Records(ctx)
	require.NoError(t, err)
	assert.Len(t, recs, 3)
	assert.NotEqual(t, before, after)
	assert.Equal(t, stripKeys(before), stripKeys(after), "nothing but the new key id's check value changed")

	s4 := openStore(t, schema, ring(t, "k2", map[string][]byte{"k2": testKey(2)}))
	_, err = s4.Get(ctx, "a")
	requireReason(t, err, pgstore.ReasonKeyUnknown, refusal.Config, ports.ErrCorrupt, "a row under a key id the keyring does not hold")
}

// stripKeys drops the keys table from a snapshot.
func stripKeys(snap string) string {
	out := ""
	skip := false
	for _, line := range splitLines(snap) {
		if len(line) > 0 && line[0] != '{' {
			skip = len(line) >= 5 && line[:5] == "keys:"
		}
		if !skip {
			out += line + "\n"
		}
	}
	return out
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := range len(s) {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// TestKeyRotation: a new current key seals new writes while rows under the
// old key still open; Rekey re-seals everything, after which the old key
// can leave the keyring; the audit chain verifies throughout.
func TestKeyRotation(t *testing.T) {
	schema := newSchema()
	ctx := t.Context()
	s := openStore(t, schema, nil)
	fill(t, s)
	require.NoError(t, s.Close())

	both := ring(t, "k2", map[string][]byte{"k1": testKey(1), "k2": testKey(2)})
	s2 := openStore(t, schema, both)
	v, err := s2.Get(ctx, "a")
	require.NoError(t, err, "an old key still opens its rows")
	assert.Equal(t, "token a", string(v))
	require.NoError(t, s2.Set(ctx, "c", []byte("token c")))
	require.NoError(t, s2.Append(ctx, ports.AuditRecord{Action: ports.AuditGrant, Outcome: "granted"}))
	var id string
	require.NoError(t, admin(t).QueryRow(ctx, `SELECT key_id FROM `+table(schema, "tokens")+` WHERE key = 'c'`).Scan(&id))
	assert.Equal(t, "k2", id, "new writes use the new key")
	_, err = s2.Records(ctx)
	require.NoError(t, err, "a chain spanning two keys verifies")

	rep, err := s2.Rekey(ctx)
	require.NoError(t, err)
	assert.Equal(t, pgstore.RekeyReport{Tokens: 2, Approvals: 1, AuditRecords: 4, Remaining: 0}, rep)
	rep, err = s2.Rekey(ctx)
	require.NoError(t, err)
	assert.Equal(t, pgstore.RekeyReport{}, rep, "a second pass has nothing to do")

	s3 := openStore(t, schema, ring(t, "k2", map[string][]byte{"k2": testKey(2)}))
	for k, want := range map[string]string{"a": "token a", "b": "token b", "c": "token c"} {
		v, err := s3.Get(ctx, k)
		require.NoError(t, err, "after Rekey the old key is not needed")
		assert.Equal(t, want, string(v))
	}
	list, err := s3.List(ctx, "srv")
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.True(t, at.Equal(list[0].GrantedAt))
	recs, err := s3.Records(ctx)
	require.NoError(t, err)
	assert.Len(t, recs, 4)
}

// TestTamperedRows: a token, approval or audit row edited, moved or forged
// in the database is detected and named; nothing is repaired or
// overwritten silently.
func TestTamperedRows(t *testing.T) {
	ctx := t.Context()
	exec := func(t *testing.T, q string, args ...any) {
		t.Helper()
		_, err := admin(t).Exec(ctx, q, args...)
		require.NoError(t, err)
	}

	t.Run("TokenEdited", func(t *testing.T) {
		schema := newSchema()
		s := openStore(t, schema, nil)
		require.NoError(t, s.Set(ctx, "a", []byte("token a")))
		exec(t, `UPDATE `+table(schema, "tokens")+` SET sealed = overlay(sealed placing '\xff' from 1 for 1)`)
		_, err := s.Get(ctx, "a")
		requireReason(t, err, pgstore.ReasonCorrupt, refusal.Config, ports.ErrCorrupt)
		requireReason(t, s.Set(ctx, "a", []byte("new")), pgstore.ReasonCorrupt, refusal.Config, ports.ErrCorrupt, "Set never replaces a row it cannot open")
		require.NoError(t, s.Delete(ctx, "a"), "Delete removes it explicitly")
		require.NoError(t, s.Set(ctx, "a", []byte("new")))
	})
	t.Run("TokenMovedToAnotherKey", func(t *testing.T) {
		schema := newSchema()
		s := openStore(t, schema, nil)
		require.NoError(t, s.Set(ctx, "victim", []byte("victim's token")))
		require.NoError(t, s.Set(ctx, "attacker", []byte("attacker's token")))
		tk := table(schema, "tokens")
		exec(t, `UPDATE `+tk+` t SET nonce = o.nonce, sealed = o.sealed FROM `+tk+` o WHERE t.key = 'victim' AND o.key = 'attacker'`)
		_, err := s.Get(ctx, "victim")
		requireReason(t, err, pgstore.ReasonCorrupt, refusal.Config, ports.ErrCorrupt, "a sealed value moved to another key's row")
		exec(t, `UPDATE `+tk+` SET key = 'renamed' WHERE key = 'attacker'`)
		_, err = s.Get(ctx, "renamed")
		requireReason(t, err, pgstore.ReasonCorrupt, refusal.Config, ports.ErrCorrupt, "a row given another key")
	})
	t.Run("ApprovalEdited", func(t *testing.T) {
		schema := newSchema()
		s := openStore(t, schema, nil)
		require.NoError(t, s.Grant(ctx, ports.Approval{Identity: grantedID, GrantedAt: at, GrantedBy: "cli"}))
		exec(t, `UPDATE `+table(schema, "approvals")+` SET record = overlay(record placing 'X' from length(record) for 1)`)
		_, err := s.List(ctx, "srv")
		requireReason(t, err, pgstore.ReasonCorrupt, refusal.Config, ports.ErrCorrupt)
		requireReason(t, s.Grant(ctx, ports.Approval{Identity: grantedID, GrantedAt: at}), pgstore.ReasonCorrupt, refusal.Config, ports.ErrCorrupt,
			"Grant never replaces a row it cannot open")
		require.NoError(t, s.Revoke(ctx, grantedID), "Revoke removes it (removing never widens anything)")
	})
	t.Run("ApprovalForged", func(t *testing.T) {
		schema := newSchema()
		s := openStore(t, schema, nil)
		other := grantedID
		other.Generation = "gen-2"
		require.NoError(t, s.Grant(ctx, ports.Approval{Identity: other, GrantedAt: at}))
		ap := table(schema, "approvals")
		// Copy the row under the identity hash of the identity an attacker
		// wants approved: its MAC binds the hash, so it fails.
		var idHash []byte
		require.NoError(t, admin(t).QueryRow(ctx, `SELECT sha256($1::bytea)`, identityWire(grantedID)).Scan(&idHash))
		exec(t, `INSERT INTO `+ap+` (id_hash, server_hash, seq, record, key_id, mac)
			SELECT $1, server_hash, seq + 1, record, key_id, mac FROM `+ap, idHash)
		_, err := s.List(ctx, "srv")
		requireReason(t, err, pgstore.ReasonCorrupt, refusal.Config, ports.ErrCorrupt, "a copied row under another identity")
		exec(t, `DELETE FROM `+ap+` WHERE id_hash = $1`, idHash)
		exec(t, `INSERT INTO `+ap+` (id_hash, server_hash, seq, record, key_id, mac)
			SELECT $1, server_hash, seq + 1, record, key_id, sha256(mac) FROM `+ap, idHash)
		_, err = s.List(ctx, "srv")
		requireReason(t, err, pgstore.ReasonCorrupt, refusal.Config, ports.ErrCorrupt, "a row with a made-up MAC")
	})
	t.Run("AuditEdited", func(t *testing.T) {
		schema := newSchema()
		s := openStore(t, schema, nil)
		fill(t, s)
		exec(t, `UPDATE `+table(schema, "audit")+` SET record = overlay(record placing 'D' from length(record) - 2 for 1) WHERE seq = 2`)
		_, err := s.Records(ctx)
		requireReason(t, err, pgstore.ReasonAuditChainBroken, refusal.Config, ports.ErrCorrupt, "an edited record")
		_, err = s.Verify(ctx, nil)
		requireReason(t, err, pgstore.ReasonAuditChainBroken, refusal.Config, ports.ErrCorrupt)
		require.NoError(t, s.Append(ctx, ports.AuditRecord{Action: ports.AuditDecide}), "the log stays append-only: nothing is lost")
		_, err = s.Prune(ctx, time.Now().Add(time.Hour))
		requireReason(t, err, pgstore.ReasonAuditChainBroken, refusal.Config, ports.ErrCorrupt, "a broken chain is never pruned")
	})
	t.Run("AuditDeleted", func(t *testing.T) {
		schema := newSchema()
		s := openStore(t, schema, nil)
		fill(t, s)
		exec(t, `DELETE FROM `+table(schema, "audit")+` WHERE seq = 2`)
		_, err := s.Records(ctx)
		requireReason(t, err, pgstore.ReasonAuditChainBroken, refusal.Config, ports.ErrCorrupt, "a deleted record")
	})
	t.Run("AuditLastDeleted", func(t *testing.T) {
		schema := newSchema()
		s := openStore(t, schema, nil)
		fill(t, s)
		exec(t, `DELETE FROM `+table(schema, "audit")+` WHERE seq = 3`)
		_, err := s.Records(ctx)
		requireReason(t, err, pgstore.ReasonAuditChainBroken, refusal.Config, ports.ErrCorrupt, "the last record deleted")
	})
	t.Run("AuditReordered", func(t *testing.T) {
		schema := newSchema()
		s := openStore(t, schema, nil)
		fill(t, s)
		au := table(schema, "audit")
		exec(t, `UPDATE `+au+` SET seq = -seq WHERE seq IN (1, 2)`)
		exec(t, `UPDATE `+au+` SET seq = CASE seq WHEN -1 THEN 2 ELSE 1 END WHERE seq < 0`)
		_, err := s.Records(ctx)
		requireReason(t, err, pgstore.ReasonAuditChainBroken, refusal.Config, ports.ErrCorrupt, "two records swapped")
	})
	t.Run("AuditEndRolledBack", func(t *testing.T) {
		schema := newSchema()
		s := openStore(t, schema, nil)
		for i := range 2 {
			require.NoError(t, s.Append(ctx, ports.AuditRecord{Action: ports.AuditDecide, Reason: fmt.Sprint(i)}))
		}
		// The attacker keeps a copy of the head row while it ends at record 2.
		oldHead := saveTable(t, schema, "audit_head")
		require.NoError(t, s.Append(ctx, ports.AuditRecord{Action: ports.AuditRevoke}))
		cp, err := s.Verify(ctx, nil)
		require.NoError(t, err)
		assert.Equal(t, int64(3), cp.Seq)
		// Delete the end of the chain and put the old head back: only a
		// checkpoint kept outside the database, or a process that saw the
		// later head, shows it.
		exec(t, `DELETE FROM `+table(schema, "audit")+` WHERE seq = 3`)
		restoreTable(t, schema, "audit_head", oldHead)
		fresh := openStore(t, schema, nil)
		recs, err := fresh.Records(ctx)
		require.NoError(t, err, "a consistent rollback verifies on its own")
		assert.Len(t, recs, 2)
		_, err = fresh.Verify(ctx, &cp)
		requireReason(t, err, pgstore.ReasonAuditChainBroken, refusal.Config, ports.ErrCorrupt, "the checkpoint is gone from the chain")
		_, err = s.Records(ctx)
		requireReason(t, err, pgstore.ReasonRolledBack, refusal.Config, ports.ErrReplayed, "the Store that read the later head")
		requireReason(t, s.Append(ctx, ports.AuditRecord{Action: ports.AuditDecide}), pgstore.ReasonRolledBack, refusal.Config, ports.ErrCorrupt,
			"nor does it append to the rolled-back chain")
	})
	t.Run("AuditHeadEdited", func(t *testing.T) {
		schema := newSchema()
		s := openStore(t, schema, nil)
		fill(t, s)
		// The head moved back by hand (seq and mac of record 2): its MAC
		// no longer verifies.
		exec(t, `UPDATE `+table(schema, "audit_head")+` SET seq = 2, mac = (SELECT mac FROM `+table(schema, "audit")+` WHERE seq = 2)`)
		exec(t, `DELETE FROM `+table(schema, "audit")+` WHERE seq = 3`)
		_, err := openStore(t, schema, nil).Records(ctx)
		requireReason(t, err, pgstore.ReasonAuditChainBroken, refusal.Config, ports.ErrCorrupt)
		requireReason(t, s.Append(ctx, ports.AuditRecord{Action: ports.AuditDecide}), pgstore.ReasonAuditChainBroken, refusal.Config, ports.ErrCorrupt)
		_, err = s.List(ctx, "srv")
		requireReason(t, err, pgstore.ReasonCorrupt, refusal.Config, ports.ErrCorrupt, "the approvals are bound to the head")
	})
	t.Run("AuditPrefixDeletedWithoutKey", func(t *testing.T) {
		schema := newSchema()
		s := openStore(t, schema, nil)
		fill(t, s)
		// A prune without the key: the prefix deleted and the base moved.
		exec(t, `UPDATE `+table(schema, "audit_head")+` SET base_seq = 1, base_mac = (SELECT mac FROM `+table(schema, "audit")+` WHERE seq = 1)`)
		exec(t, `DELETE FROM `+table(schema, "audit")+` WHERE seq = 1`)
		_, err := openStore(t, schema, nil).Records(ctx)
		requireReason(t, err, pgstore.ReasonAuditChainBroken, refusal.Config, ports.ErrCorrupt, "the base is part of the head's MAC")
	})
}

// identityWire is the canonical identity encoding the store hashes into an
// approval's row key (a uvarint length before each field, in order).
func identityWire(id ports.Identity) []byte {
	var b []byte
	for _, f := range []string{id.ServerID, string(id.Tier), id.Origin, id.Fingerprint, id.Security, id.Repository, id.Generation} {
		b = append(b, byte(len(f))) // every field here is shorter than 128 bytes
		b = append(b, f...)
	}
	return b
}

// TestAuditRetention: Prune removes the oldest records as a prefix and the
// rest still verifies from the new base; a checkpoint before the base is
// named as pruned, one after it still verifies.
func TestAuditRetention(t *testing.T) {
	schema := newSchema()
	ctx := t.Context()
	s := openStore(t, schema, nil)
	for i := range 10 {
		require.NoError(t, s.Append(ctx, ports.AuditRecord{Action: ports.AuditDecide, Reason: string(rune('a' + i))}))
	}
	cp3 := checkpointAt(t, schema, 3)
	cp8 := checkpointAt(t, schema, 8)
	old := time.Now().Add(-48 * time.Hour)
	// Records 1-6 are old; 4 looks new (the server clock moved): the prefix
	// stops before it.
	_, err := admin(t).Exec(ctx, `UPDATE `+table(schema, "audit")+` SET appended_at = $1 WHERE seq <= 6 AND seq <> 4`, old)
	require.NoError(t, err)
	n, err := s.Prune(ctx, time.Now().Add(-24*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, int64(3), n, "only the prefix 1-3 is older than the cut")
	_, err = admin(t).Exec(ctx, `UPDATE `+table(schema, "audit")+` SET appended_at = $1 WHERE seq = 4`, old)
	require.NoError(t, err)
	n, err = s.Prune(ctx, time.Now().Add(-24*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, int64(3), n, "then 4-6")

	recs, err := s.Records(ctx)
	require.NoError(t, err, "the kept records verify from the retention base")
	require.Len(t, recs, 4)
	assert.Equal(t, "g", recs[0].Reason)
	_, err = s.Verify(ctx, &cp3)
	requireReason(t, err, pgstore.ReasonCheckpointPruned, refusal.Config, ports.ErrNotFound)
	_, err = s.Verify(ctx, &cp8)
	require.NoError(t, err, "a checkpoint after the base still verifies")
	require.NoError(t, s.Append(ctx, ports.AuditRecord{Action: ports.AuditRevoke}))
	head, err := s.Verify(ctx, &cp8)
	require.NoError(t, err)
	assert.Equal(t, int64(11), head.Seq)

	n, err = s.Prune(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, int64(4), n, "everything but the last record, which the head is bound to")
	recs, err = s.Records(ctx)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, ports.AuditRevoke, recs[0].Action)
	_, err = s.Verify(ctx, &head)
	require.NoError(t, err, "the head is still in the chain")
	n, err = s.Prune(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	assert.Zero(t, n, "the last record stays")
	require.NoError(t, s.Append(ctx, ports.AuditRecord{Action: ports.AuditRevoke}))
	recs, err = s.Records(ctx)
	require.NoError(t, err)
	assert.Len(t, recs, 2)
}

func checkpointAt(t *testing.T, schema string, seq int64) pgstore.Checkpoint {
	t.Helper()
	cp := pgstore.Checkpoint{Seq: seq}
	require.NoError(t, admin(t).QueryRow(context.Background(), `SELECT mac FROM `+table(schema, "audit")+` WHERE seq = $1`, seq).Scan(&cp.MAC))
	return cp
}
