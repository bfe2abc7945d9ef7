package memstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/memstore"
	"github.com/mcpward/mcpward/conformance"
	"github.com/mcpward/mcpward/ports"
)

// harness returns a conformance harness maker whose handles all share one
// Store (the backing store); no Location: it cannot cross processes.
func harness[S any](as func(*memstore.Store) S) func(*testing.T) conformance.Harness[S] {
	return func(t *testing.T) conformance.Harness[S] {
		s := memstore.New(nil)
		return conformance.Harness[S]{Open: func(*testing.T) S { return as(s) }}
	}
}

func TestConformance(t *testing.T) {
	t.Run("TokenStore", func(t *testing.T) {
		conformance.RunTokenStore(t, harness(func(s *memstore.Store) ports.TokenStore { return s }))
	})
	t.Run("Locker", func(t *testing.T) {
		conformance.RunLocker(t, harness(func(s *memstore.Store) ports.Locker { return s }))
	})
	t.Run("ApprovalStore", func(t *testing.T) {
		conformance.RunApprovalStore(t, harness(func(s *memstore.Store) ports.ApprovalStore { return s }))
	})
	t.Run("AuditLog", func(t *testing.T) {
		conformance.RunAuditLog(t, harness(func(s *memstore.Store) ports.AuditLog { return s }))
	})
}

func TestAuditTrailIsBounded(t *testing.T) {
	ctx := context.Background()
	s := memstore.New(&memstore.Options{MaxAuditRecords: 3})
	for i := range 5 {
		require.NoError(t, s.Append(ctx, ports.AuditRecord{Actor: fmt.Sprint(i)}))
	}
	recs, err := s.Records(ctx)
	require.NoError(t, err)
	var actors []string
	for _, r := range recs {
		actors = append(actors, r.Actor)
	}
	assert.Equal(t, []string{"2", "3", "4"}, actors, "the newest records, oldest first")
}

func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	s := memstore.New(nil)
	var wg sync.WaitGroup
	counter := 0
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				unlock, err := s.Lock(ctx, "k")
				if !assert.NoError(t, err) {
					return
				}
				counter++ // guarded by the lock: -race fails if it is not
				assert.NoError(t, unlock())
				key := fmt.Sprintf("t%d-%d", i, j)
				assert.NoError(t, s.Set(ctx, key, []byte("v")))
				assert.NoError(t, s.Append(ctx, ports.AuditRecord{Actor: key}))
				assert.NoError(t, s.Grant(ctx, ports.Approval{Identity: ports.Identity{ServerID: key}}))
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 400, counter)
	recs, err := s.Records(ctx)
	require.NoError(t, err)
	assert.Len(t, recs, 400)
}
