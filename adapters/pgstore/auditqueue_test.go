package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpward/mcpward/adapters/pgstore"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// queued is the i-th record the queue tests enqueue.
func queued(i int) ports.AuditRecord {
	return ports.AuditRecord{Action: ports.AuditCall, Outcome: "ok", Reason: fmt.Sprint("q", i)}
}

// reasons returns the Reason of every record, in order.
func reasons(recs []ports.AuditRecord) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Reason
	}
	return out
}

// lockHead holds the audit head's row lock from another session until the
// returned func is called (or t ends), so every audit write waits.
func lockHead(t *testing.T, schema string) func() {
	t.Helper()
	ctx := t.Context()
	tx, err := admin(t).Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `SELECT 1 FROM `+table(schema, "audit_head")+` FOR UPDATE`)
	require.NoError(t, err)
	done := false
	release := func() {
		if !done {
			done = true
			require.NoError(t, tx.Rollback(context.Background()))
		}
	}
	t.Cleanup(release)
	return release
}

// TestAuditQueueWritesOnItsOwn: an enqueued record is stored with no Flush
// and no later Append (the Store's own write), and another Store sees it.
func TestAuditQueueWritesOnItsOwn(t *testing.T) {
	schema := newSchema()
	s := openStore(t, schema, nil)
	other := openStore(t, schema, nil)
	require.NoError(t, s.Enqueue(queued(0)))
	require.Eventually(t, func() bool {
		recs, err := other.Records(t.Context())
		return err == nil && len(recs) == 1
	}, 10*time.Second, 2*time.Millisecond)
}

// TestAuditQueueAppendCarries: an Append stores the records enqueued
// before it, before its own, by the time it returns, and the chain stays
// one chain whatever mix of calls made it.
func TestAuditQueueAppendCarries(t *testing.T) {
	ctx := t.Context()
	schema := newSchema()
	s := openStore(t, schema, nil)
	other := openStore(t, schema, nil)
	var want []string
	for round := range 20 {
		for i := range round % 4 {
			r := queued(round*10 + i)
			require.NoError(t, s.Enqueue(r))
			want = append(want, r.Reason)
		}
		r := ports.AuditRecord{Action: ports.AuditDecide, Reason: fmt.Sprint("a", round)}
		require.NoError(t, s.Append(ctx, r))
		want = append(want, r.Reason)
		recs, err := other.Records(ctx)
		require.NoError(t, err)
		require.Equal(t, want, reasons(recs), "round %d: every record enqueued before the Append is stored with it, before it", round)
	}
	cp, err := other.Verify(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(len(want)), cp.Seq)
}

// TestAuditQueueAppendAbandoned: an Append whose ctx ended does not lose
// the records enqueued before it: they are stored by the next write, and
// Flush reports no loss.
func TestAuditQueueAppendAbandoned(t *testing.T) {
	ctx := t.Context()
	schema := newSchema()
	s := openStore(t, schema, nil)
	release := lockHead(t, schema)
	require.NoError(t, s.Enqueue(queued(0)))
	require.NoError(t, s.Enqueue(queued(1)))
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	err := s.Append(short, ports.AuditRecord{Action: ports.AuditDecide, Reason: "abandoned"})
	requireReason(t, err, pgstore.ReasonUnavailable, refusal.Transient, ports.ErrUnavailable)
	require.NoError(t, s.Enqueue(queued(2)))
	release()
	require.NoError(t, s.Flush(ctx), "nothing enqueued was lost")
	recs, err := openStore(t, schema, nil).Records(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"q0", "q1", "q2"}, reasons(recs))
}

// TestAuditQueueChainVerified: enqueued records join the same hash/MAC
// chain as appended ones, so an edited, replayed or dropped queued record
// is caught by Records and Verify.
func TestAuditQueueChainVerified(t *testing.T) {
	ctx := t.Context()
	exec := func(t *testing.T, q string, args ...any) {
		t.Helper()
		_, err := admin(t).Exec(ctx, q, args...)
		require.NoError(t, err)
	}
	write := func(t *testing.T, s *pgstore.Store) {
		t.Helper()
		for i := range 4 {
			require.NoError(t, s.Enqueue(queued(i)))
		}
		require.NoError(t, s.Flush(ctx))
		recs, err := s.Records(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"q0", "q1", "q2", "q3"}, reasons(recs))
	}
	broken := []any{pgstore.ReasonAuditChainBroken, ports.ErrCorrupt}
	for name, tc := range map[string]struct {
		tamper func(t *testing.T, schema string)
		// want is the reason and sentinel reported.
		want []any
	}{
		"Edited": {func(t *testing.T, schema string) {
			exec(t, `UPDATE `+table(schema, "audit")+` SET record = overlay(record placing 'Z' from length(record) - 1 for 1) WHERE seq = 3`)
		}, broken},
		"ReplayedOverAnother": {func(t *testing.T, schema string) {
			au := table(schema, "audit")
			exec(t, `UPDATE `+au+` t SET record = o.record, mac = o.mac, key_id = o.key_id FROM `+au+` o WHERE t.seq = 3 AND o.seq = 2`)
		}, broken},
		// A row past the head is what a head rolled back leaves.
		"ReplayedAtTheEnd": {func(t *testing.T, schema string) {
			au := table(schema, "audit")
			exec(t, `INSERT INTO `+au+` (seq, record, key_id, mac, approvals_seq) SELECT 5, record, key_id, mac, approvals_seq FROM `+au+` WHERE seq = 2`)
		}, []any{pgstore.ReasonRolledBack, ports.ErrReplayed}},
		"Dropped": {func(t *testing.T, schema string) {
			exec(t, `DELETE FROM `+table(schema, "audit")+` WHERE seq = 2`)
		}, broken},
	} {
		t.Run(name, func(t *testing.T) {
			schema := newSchema()
			write(t, openStore(t, schema, nil))
			tc.tamper(t, schema)
			fresh := openStore(t, schema, nil)
			reason, sentinel := tc.want[0].(string), tc.want[1].(error)
			_, err := fresh.Records(ctx)
			requireReason(t, err, reason, refusal.Config, sentinel)
			_, err = fresh.Verify(ctx, nil)
			requireReason(t, err, reason, refusal.Config, sentinel)
		})
	}
}

// TestAuditQueueFailedWriteReportedOnce: a queued record whose write fails
// (here the head was edited without the key) is reported by the next
// Flush, once, as ErrUnavailable.
func TestAuditQueueFailedWriteReportedOnce(t *testing.T) {
	ctx := t.Context()
	schema := newSchema()
	s := openStore(t, schema, nil)
	for i := range 3 {
		require.NoError(t, s.Append(ctx, ports.AuditRecord{Action: ports.AuditDecide, Reason: fmt.Sprint(i)}))
	}
	_, err := admin(t).Exec(ctx, `UPDATE `+table(schema, "audit_head")+` SET seq = 2, mac = (SELECT mac FROM `+table(schema, "audit")+` WHERE seq = 2)`)
	require.NoError(t, err)
	require.NoError(t, s.Enqueue(queued(0)), "Enqueue does not wait for the write")
	requireReason(t, s.Flush(ctx), pgstore.ReasonUnavailable, refusal.Transient, ports.ErrUnavailable)
	require.NoError(t, s.Flush(ctx), "a lost record is reported once")
	require.NoError(t, s.Flush(ctx))
}

// TestAuditQueueBoundedAndFlushCtx: while the writes cannot proceed (the
// head is locked by another session), Enqueue refuses a record once
// QueueLimit are waiting and Flush gives up when its ctx ends; once the
// lock goes, every accepted record is stored, in order, and the refused
// ones are not.
func TestAuditQueueBoundedAndFlushCtx(t *testing.T) {
	ctx := t.Context()
	schema := newSchema()
	s := openStore(t, schema, nil)
	release := lockHead(t, schema)
	var accepted []string
	var refused error
	for i := range 2*pgstore.QueueLimit + 2 {
		r := queued(i)
		if err := s.Enqueue(r); err != nil {
			refused = err
			break
		}
		accepted = append(accepted, r.Reason)
	}
	requireReason(t, refused, pgstore.ReasonUnavailable, refusal.Transient, ports.ErrUnavailable, "a full queue refuses")
	assert.GreaterOrEqual(t, len(accepted), pgstore.QueueLimit)

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	err := s.Flush(short)
	requireReason(t, err, pgstore.ReasonUnavailable, refusal.Transient, ports.ErrUnavailable)
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	release()
	require.NoError(t, s.Flush(ctx), "the write went on after the abandoned Flush")
	recs, err := openStore(t, schema, nil).Records(ctx)
	require.NoError(t, err)
	require.Equal(t, accepted, reasons(recs))
}

// TestAuditQueueClose: Close writes what is waiting and leaves no
// goroutine behind; a closed Store refuses Enqueue, and Close and Flush
// may be called again.
func TestAuditQueueClose(t *testing.T) {
	needPG(t)
	ctx := t.Context()
	schema := newSchema()
	reader := openStore(t, schema, nil)
	check := goleak.IgnoreCurrent()
	s, err := pgstore.Open(ctx, testDSN, pgstore.Options{Keyring: testRing(t), Schema: schema})
	require.NoError(t, err)
	var want []string
	for i := range 50 {
		require.NoError(t, s.Enqueue(queued(i)))
		want = append(want, queued(i).Reason)
	}
	require.NoError(t, s.Close())
	goleak.VerifyNone(t, check)
	recs, err := reader.Records(ctx)
	require.NoError(t, err)
	require.Equal(t, want, reasons(recs), "Close wrote every record still waiting")
	requireReason(t, s.Enqueue(queued(99)), pgstore.ReasonUnavailable, refusal.Transient, ports.ErrUnavailable)
	require.NoError(t, s.Close())
	require.NoError(t, s.Flush(ctx), "nothing is waiting and nothing was lost")
	var n int
	require.NoError(t, admin(t).QueryRow(ctx, `SELECT count(*) FROM `+table(schema, "audit")).Scan(&n))
	assert.Equal(t, 50, n)
}
