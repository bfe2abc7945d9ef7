package activation

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// TestDecideDeferred: on a ports.AuditQueue the decision's record is
// enqueued (a crash before Flush would lose it) and Flush makes it
// durable; a failed Enqueue is Decide's failed append (denied,
// ReasonAuditUnavailable); a failed Flush is ReasonAuditUnavailable,
// Transient, wrapping the store's sentinel.
func TestDecideDeferred(t *testing.T) {
	ctx := context.Background()
	newDecider := func(t *testing.T) (*Decider, *portstest.AuditQueue) {
		q := portstest.NewAuditQueue()
		d, err := New(Options{Approvals: &fakeStore{}, Audit: q})
		require.NoError(t, err)
		return d, q
	}

	t.Run("enqueued, then durable at Flush", func(t *testing.T) {
		d, q := newDecider(t)
		dec, err := d.DecideDeferred(ctx, subj(ports.TierUser))
		require.NoError(t, err)
		assert.True(t, dec.Allowed)
		recs, _ := q.Records(ctx)
		assert.Empty(t, recs, "not durable before Flush")
		require.Len(t, q.Pending(), 1)
		assert.Equal(t, ports.AuditDecide, q.Pending()[0].Action)
		assert.Equal(t, OutcomeAllowed, q.Pending()[0].Outcome)
		require.NoError(t, d.Flush(ctx))
		recs, _ = q.Records(ctx)
		require.Len(t, recs, 1, "durable after Flush")
		assert.Empty(t, q.Pending())
	})

	t.Run("Decide stays durable at return", func(t *testing.T) {
		d, q := newDecider(t)
		_, err := d.Decide(ctx, subj(ports.TierUser))
		require.NoError(t, err)
		recs, _ := q.Records(ctx)
		assert.Len(t, recs, 1)
	})

	t.Run("a failed Enqueue denies", func(t *testing.T) {
		d, q := newDecider(t)
		q.Fail("Enqueue", ports.ErrUnavailable)
		dec, err := d.DecideDeferred(ctx, subj(ports.TierUser))
		assert.False(t, dec.Allowed)
		assert.Equal(t, ReasonAuditUnavailable, dec.Reason)
		assertRefusal(t, err, refusal.Transient, ReasonAuditUnavailable)
		assert.ErrorIs(t, err, ports.ErrUnavailable)
	})

	t.Run("a failed Flush is audit_unavailable", func(t *testing.T) {
		d, q := newDecider(t)
		_, err := d.DecideDeferred(ctx, subj(ports.TierUser))
		require.NoError(t, err)
		q.Fail("Flush", ports.ErrUnavailable)
		err = d.Flush(ctx)
		assertRefusal(t, err, refusal.Transient, ReasonAuditUnavailable)
		assert.ErrorIs(t, err, ports.ErrUnavailable)
	})

	t.Run("a plain AuditLog: DecideDeferred is Decide, Flush does nothing", func(t *testing.T) {
		audit := &fakeAudit{}
		d, err := New(Options{Approvals: &fakeStore{}, Audit: audit})
		require.NoError(t, err)
		_, err = d.DecideDeferred(ctx, subj(ports.TierUser))
		require.NoError(t, err)
		assert.Len(t, audit.all(), 1)
		assert.NoError(t, d.Flush(ctx))
	})
}
