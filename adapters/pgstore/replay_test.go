package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/pgstore"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// The attacker of these tests can read and write every table of the
// schema (as the database's owner can) but has no store key: it copies
// rows and puts them back later, whole tables included.

// admins caches one superuser connection per test (the helpers below run
// often; a connection each would exhaust the cluster).
var admins sync.Map // testing.TB → *pgx.Conn

// adminOf returns t's cached superuser connection.
func adminOf(t testing.TB) *pgx.Conn {
	t.Helper()
	if c, ok := admins.Load(t); ok {
		return c.(*pgx.Conn)
	}
	c := admin(t)
	admins.Store(t, c)
	t.Cleanup(func() { admins.Delete(t) })
	return c
}

// saveTable returns every row of schema.name as JSON, for restoreTable.
func saveTable(t testing.TB, schema, name string) string {
	t.Helper()
	var out string
	require.NoError(t, adminOf(t).QueryRow(context.Background(),
		`SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]')::text FROM `+table(schema, name)+` x`).Scan(&out))
	return out
}

// restoreTable replaces every row of schema.name with the rows saved.
func restoreTable(t testing.TB, schema, name, saved string) {
	t.Helper()
	ctx := context.Background()
	a := adminOf(t)
	_, err := a.Exec(ctx, `DELETE FROM `+table(schema, name))
	require.NoError(t, err)
	_, err = a.Exec(ctx, `INSERT INTO `+table(schema, name)+` SELECT * FROM jsonb_populate_recordset(NULL::`+table(schema, name)+`, $1::jsonb)`, saved)
	require.NoError(t, err)
}

// reinsertRows puts back every row of saved (a saveTable of approvals)
// that the table no longer holds under its id_hash.
func reinsertRows(t testing.TB, schema, saved string) {
	t.Helper()
	tb := table(schema, "approvals")
	_, err := adminOf(t).Exec(context.Background(), `INSERT INTO `+tb+` SELECT * FROM jsonb_populate_recordset(NULL::`+tb+`, $1::jsonb) ON CONFLICT (id_hash) DO NOTHING`, saved)
	require.NoError(t, err)
}

// revokedID is an identity granted and then revoked in the replay tests.
func revokedID() ports.Identity {
	id := grantedID
	id.Origin = "/work/repo/.mcp.json#revoked"
	return id
}

// TestReplayedApprovalRefused is issue 22's attack 5: a database writer
// without the key saves an approval row, waits for the revoke and inserts
// the row again. The approval stays revoked: List of the server fails with
// approval_replayed naming the server (ports.ErrReplayed and ErrCorrupt),
// in this process and in a fresh one; VerifyApprovals says the same;
// RemoveReplayed removes exactly the replayed row, after which the
// server's other approval is listed again and the revoked one can be
// granted anew.
func TestReplayedApprovalRefused(t *testing.T) {
	schema := newSchema()
	s := openStore(t, schema, nil)
	ctx := t.Context()
	kept := ports.Approval{Identity: grantedID, GrantedAt: at, GrantedBy: "cli"}
	require.NoError(t, s.Grant(ctx, kept))
	require.NoError(t, s.Grant(ctx, ports.Approval{Identity: revokedID(), GrantedAt: at, GrantedBy: "cli"}))
	saved := saveTable(t, schema, "approvals")
	require.NoError(t, s.Revoke(ctx, revokedID()))
	list, err := s.List(ctx, "srv")
	require.NoError(t, err)
	require.Len(t, list, 1)

	reinsertRows(t, schema, saved)
	for name, st := range map[string]*pgstore.Store{"the revoking Store": s, "a fresh Store": openStore(t, schema, nil)} {
		list, err := st.List(ctx, "srv")
		requireReason(t, err, pgstore.ReasonApprovalReplayed, refusal.Config, ports.ErrReplayed, name)
		assert.ErrorIs(t, err, ports.ErrCorrupt, name)
		assert.Nil(t, list, "%s: nothing is listed, so nothing is matched", name)
		var re *refusal.Error
		require.ErrorAs(t, err, &re)
		assert.Equal(t, "srv", re.Server, "the error names the server")
		err = st.VerifyApprovals(ctx)
		requireReason(t, err, pgstore.ReasonApprovalReplayed, refusal.Config, ports.ErrReplayed, name)
		require.ErrorAs(t, err, &re)
		assert.Equal(t, "srv", re.Server)
		list, err = st.List(ctx, "other")
		require.NoError(t, err, "another server's approvals are unaffected")
		assert.Empty(t, list)
	}
	never := grantedID
	never.Generation = "never-granted"
	requireReason(t, s.Revoke(ctx, never), pgstore.ReasonNotFound, refusal.Config, ports.ErrNotFound,
		"a revoke of an identity not granted, beside the replayed row")
	require.NoError(t, s.Grant(ctx, kept), "a grant beside the replayed row")

	n, err := s.RemoveReplayed(ctx, "srv")
	require.NoError(t, err)
	assert.Equal(t, 1, n, "only the replayed row is removed")
	require.NoError(t, s.VerifyApprovals(ctx))
	list, err = s.List(ctx, "srv")
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, grantedID, list[0].Identity)
	n, err = s.RemoveReplayed(ctx, "srv")
	require.NoError(t, err)
	assert.Zero(t, n, "nothing more to remove")

	require.NoError(t, s.Grant(ctx, ports.Approval{Identity: revokedID(), GrantedAt: at.Add(time.Hour), GrantedBy: "cli"}),
		"the revoked identity can be approved again")
	list, err = openStore(t, schema, nil).List(ctx, "srv")
	require.NoError(t, err)
	assert.Len(t, list, 2)
}

// TestReplayedRowReplacedByGrant: a grant of the identity whose old row
// was put back replaces it (the row authenticates; it is only stale), and
// the store holds the new grant.
func TestReplayedRowReplacedByGrant(t *testing.T) {
	schema := newSchema()
	s := openStore(t, schema, nil)
	ctx := t.Context()
	require.NoError(t, s.Grant(ctx, ports.Approval{Identity: revokedID(), GrantedAt: at}))
	saved := saveTable(t, schema, "approvals")
	require.NoError(t, s.Revoke(ctx, revokedID()))
	reinsertRows(t, schema, saved)
	require.NoError(t, s.Grant(ctx, ports.Approval{Identity: revokedID(), GrantedAt: at.Add(time.Hour), GrantedBy: "again"}))
	list, err := s.List(ctx, "srv")
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "again", list[0].GrantedBy)
}

// TestOlderGrantPutBack: replacing a row by an older grant of the same
// identity (saved before a re-grant) is refused as a replay too.
func TestOlderGrantPutBack(t *testing.T) {
	schema := newSchema()
	s := openStore(t, schema, nil)
	ctx := t.Context()
	require.NoError(t, s.Grant(ctx, ports.Approval{Identity: grantedID, GrantedAt: at, GrantedBy: "first"}))
	saved := saveTable(t, schema, "approvals")
	require.NoError(t, s.Grant(ctx, ports.Approval{Identity: grantedID, GrantedAt: at.Add(time.Hour), GrantedBy: "second"}))
	restoreTable(t, schema, "approvals", saved)
	_, err := openStore(t, schema, nil).List(ctx, "srv")
	requireReason(t, err, pgstore.ReasonApprovalReplayed, refusal.Config, ports.ErrReplayed)
}

// TestReplayWholeState: the attacker restores more than the row: the
// server's set, the head row, every approvals table. Each is refused by
// name; only rolling back the end of the audit chain together with them
// passes in a process that never saw the later state — the documented
// limit — and then a checkpoint taken after the revoke, or the process
// that saw the later head, refuses it.
func TestReplayWholeState(t *testing.T) {
	ctx := t.Context()
	// prepare grants two approvals, saves every table (the attacker's
	// copy, and a checkpoint), revokes one and appends the revoke's audit
	// record as the activation layer does.
	prepare := func(t *testing.T) (schema string, s *pgstore.Store, saved map[string]string, cp pgstore.Checkpoint) {
		schema = newSchema()
		s = openStore(t, schema, nil)
		require.NoError(t, s.Grant(ctx, ports.Approval{Identity: grantedID, GrantedAt: at}))
		require.NoError(t, s.Grant(ctx, ports.Approval{Identity: revokedID(), GrantedAt: at}))
		require.NoError(t, s.Append(ctx, ports.AuditRecord{Action: ports.AuditGrant, Identity: revokedID()}))
		saved = map[string]string{}
		for _, tb := range []string{"approvals", "approval_sets", "audit_head", "audit"} {
			saved[tb] = saveTable(t, schema, tb)
		}
		require.NoError(t, s.Revoke(ctx, revokedID()))
		require.NoError(t, s.Append(ctx, ports.AuditRecord{Action: ports.AuditRevoke, Identity: revokedID()}))
		var err error
		cp, err = s.Verify(ctx, nil)
		require.NoError(t, err)
		return schema, s, saved, cp
	}
	tests := []struct {
		name   string
		tables []string
		reason string
	}{
		{"the row", []string{"approvals"}, pgstore.ReasonApprovalReplayed},
		{"the row and the server's set", []string{"approvals", "approval_sets"}, pgstore.ReasonApprovalReplayed},
		{"the set alone", []string{"approval_sets"}, pgstore.ReasonApprovalReplayed},
		{"the head alone", []string{"audit_head"}, pgstore.ReasonRolledBack},
		{"row, set and head, the audit records after them left", []string{"approvals", "approval_sets", "audit_head"}, pgstore.ReasonRolledBack},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema, s, saved, _ := prepare(t)
			for _, tb := range tt.tables {
				restoreTable(t, schema, tb, saved[tb])
			}
			for name, st := range map[string]*pgstore.Store{"the same Store": s, "a fresh Store": openStore(t, schema, nil)} {
				_, err := st.List(ctx, "srv")
				requireReason(t, err, tt.reason, refusal.Config, ports.ErrReplayed, name)
				requireReason(t, st.VerifyApprovals(ctx), tt.reason, refusal.Config, ports.ErrReplayed, name)
			}
		})
	}
	t.Run("the head's approvals state removed to force a new adoption", func(t *testing.T) {
		schema, _, saved, _ := prepare(t)
		reinsertRows(t, schema, saved["approvals"])
		_, err := admin(t).Exec(ctx, `UPDATE `+table(schema, "audit_head")+` SET approvals_seq = NULL, approvals_digest = NULL, key_id = NULL, head_mac = NULL`)
		require.NoError(t, err)
		fresh := openStore(t, schema, nil)
		_, err = fresh.List(ctx, "srv")
		requireReason(t, err, pgstore.ReasonRolledBack, refusal.Config, ports.ErrReplayed, "the audit records show the state existed: no new adoption")
		requireReason(t, fresh.Append(ctx, ports.AuditRecord{Action: ports.AuditDecide}), pgstore.ReasonRolledBack, refusal.Config, ports.ErrReplayed)
	})
	t.Run("everything rolled back, the audit tail included: the documented limit", func(t *testing.T) {
		schema, s, saved, cp := prepare(t)
		for _, tb := range []string{"approvals", "approval_sets", "audit", "audit_head"} {
			restoreTable(t, schema, tb, saved[tb])
		}
		fresh := openStore(t, schema, nil)
		list, err := fresh.List(ctx, "srv")
		require.NoError(t, err, "a process that never saw the later state cannot tell")
		assert.Len(t, list, 2)
		_, err = fresh.Verify(ctx, &cp)
		requireReason(t, err, pgstore.ReasonAuditChainBroken, refusal.Config, ports.ErrCorrupt,
			"a checkpoint kept outside the database after the revoke shows it")
		_, err = s.List(ctx, "srv")
		requireReason(t, err, pgstore.ReasonRolledBack, refusal.Config, ports.ErrReplayed, "the process that saw the later head refuses it")
	})
}

// TestReplayProperty: whatever an attacker without the key restores from
// any earlier state — any earlier copy of the approvals table (whole, or
// its old rows put back beside the current ones), of the sets, of the
// head — List never returns an approval the store does not hold now: it
// returns a subset of the current approvals, each exactly as granted, or
// fails with ErrCorrupt. Rolling the audit chain's end back is the one
// move left out (the documented limit, TestReplayWholeState).
func TestReplayProperty(t *testing.T) {
	ctx := t.Context()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 22))
	schema := newSchema()
	s := openStore(t, schema, nil)
	ids := make([]ports.Identity, 4)
	for i := range ids {
		ids[i] = grantedID
		ids[i].Origin = fmt.Sprintf("/work/repo-%d/.mcp.json", i)
	}
	current := map[ports.Identity]ports.Approval{}
	var snapshots []map[string]string
	for step := range 12 {
		id := ids[rng.IntN(len(ids))]
		if _, ok := current[id]; ok && rng.IntN(2) == 0 {
			require.NoError(t, s.Revoke(ctx, id))
			delete(current, id)
		} else {
			a := ports.Approval{Identity: id, GrantedAt: at.Add(time.Duration(step) * time.Minute), GrantedBy: fmt.Sprint(step)}
			require.NoError(t, s.Grant(ctx, a))
			current[id] = a
		}
		require.NoError(t, s.Append(ctx, ports.AuditRecord{Action: ports.AuditDecide, Reason: fmt.Sprint(step)}))
		snap := map[string]string{}
		for _, tb := range []string{"approvals", "approval_sets", "audit_head"} {
			snap[tb] = saveTable(t, schema, tb)
		}
		snapshots = append(snapshots, snap)
	}
	final := snapshots[len(snapshots)-1]
	refused := 0
	for trial := range 30 {
		old := snapshots[rng.IntN(len(snapshots)-1)]
		var moves []string
		switch rng.IntN(3) {
		case 0:
			restoreTable(t, schema, "approvals", old["approvals"])
			moves = append(moves, "approvals restored")
		case 1:
			reinsertRows(t, schema, old["approvals"])
			moves = append(moves, "old approval rows put back")
		}
		for _, tb := range []string{"approval_sets", "audit_head"} {
			if rng.IntN(3) == 0 {
				restoreTable(t, schema, tb, old[tb])
				moves = append(moves, tb+" restored")
			}
		}
		fresh, err := pgstore.Open(ctx, testDSN, pgstore.Options{Keyring: testRing(t), Schema: schema, MaxConns: 1})
		require.NoError(t, err)
		list, err := fresh.List(ctx, "srv")
		require.NoError(t, fresh.Close())
		if err != nil {
			require.ErrorIs(t, err, ports.ErrCorrupt, "trial %d (%v)", trial, moves)
			refused++
		} else {
			for _, a := range list {
				want, ok := current[a.Identity]
				require.True(t, ok, "trial %d (%v): an approval the store does not hold was listed", trial, moves)
				require.True(t, want.GrantedAt.Equal(a.GrantedAt) && want.GrantedBy == a.GrantedBy,
					"trial %d (%v): an older grant was listed", trial, moves)
			}
			if len(moves) > 0 && !slices.Contains(moves, "audit_head restored") {
				// Only rows went back: what is listed is what is held.
				assert.LessOrEqual(t, len(list), len(current))
			}
		}
		for _, tb := range []string{"approvals", "approval_sets", "audit_head"} {
			restoreTable(t, schema, tb, final[tb])
		}
	}
	t.Logf("%d of 30 trials refused", refused)
	list, err := openStore(t, schema, nil).List(ctx, "srv")
	require.NoError(t, err, "the final state restored verifies")
	assert.Len(t, list, len(current))
}

// TestRemoveReplayedRefusesWhenUnsure: with the sets or the head changed
// without the key the store cannot tell which rows are current, so
// RemoveReplayed removes nothing.
func TestRemoveReplayedRefusesWhenUnsure(t *testing.T) {
	schema := newSchema()
	s := openStore(t, schema, nil)
	ctx := t.Context()
	require.NoError(t, s.Grant(ctx, ports.Approval{Identity: grantedID, GrantedAt: at}))
	saved := saveTable(t, schema, "approval_sets")
	require.NoError(t, s.Grant(ctx, ports.Approval{Identity: revokedID(), GrantedAt: at}))
	restoreTable(t, schema, "approval_sets", saved)
	before := snapshot(t, schema)
	_, err := s.RemoveReplayed(ctx, "srv")
	requireReason(t, err, pgstore.ReasonApprovalReplayed, refusal.Config, ports.ErrReplayed)
	requireReason(t, s.Revoke(ctx, grantedID), pgstore.ReasonApprovalReplayed, refusal.Config, ports.ErrReplayed,
		"a revoke the store cannot record is refused")
	assert.Equal(t, before, snapshot(t, schema), "nothing was removed")
	var pe *pgstore.Error
	require.True(t, errors.As(err, &pe))
}
