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

	"github.com/mcpward/mcpward/ports"
)

// TestAppendAbandonedRequeues: when the records an Append took from the
// queue are not stored because the Append's ctx ended (the head is locked
// by another session meanwhile), they go back to the front of the queue,
// uncounted and not lost, and the next write stores them in order. The
// records are put in the queue by hand (the writer is not woken), so the
// Append is the write that takes them.
func TestAppendAbandonedRequeues(t *testing.T) {
	dsn := os.Getenv("MCPWARD_PGSTORE_TEST_DSN") // set by TestMain once the cluster is up
	if dsn == "" {
		t.Skip("no PostgreSQL")
	}
	ctx := t.Context()
	key := make([]byte, KeyLen)
	ring, err := NewKeyring("k", map[string][]byte{"k": key})
	require.NoError(t, err)
	schema := fmt.Sprintf("rq_%d", time.Now().UnixNano())
	s, err := Open(ctx, dsn, Options{Keyring: ring, Schema: schema})
	require.NoError(t, err)
	defer s.Close()

	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `SELECT 1 FROM `+pgx.Identifier{schema, "audit_head"}.Sanitize()+` FOR UPDATE`)
	require.NoError(t, err)

	q := s.aq
	q.mu.Lock()
	for i := range 2 {
		q.pending = append(q.pending, encodeRecord(ports.AuditRecord{Action: ports.AuditCall, Reason: fmt.Sprint("q", i)}))
		q.enqueued++
	}
	q.mu.Unlock()
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	require.Error(t, s.Append(short, ports.AuditRecord{Action: ports.AuditDecide, Reason: "abandoned"}))
	q.mu.Lock()
	pending, written, lost := len(q.pending), q.written, q.lost
	q.mu.Unlock()
	assert.Equal(t, 2, pending, "the records are back in the queue")
	assert.Zero(t, written)
	assert.False(t, lost)

	require.NoError(t, tx.Rollback(ctx))
	require.NoError(t, s.Flush(ctx))
	recs, err := s.Records(ctx)
	require.NoError(t, err)
	var got []string
	for _, r := range recs {
		got = append(got, r.Reason)
	}
	assert.Equal(t, []string{"q0", "q1"}, got)
}
