package pgstore_test

import (
	"testing"

	"github.com/mcpward/mcpward/adapters/pgstore"
	"github.com/mcpward/mcpward/conformance"
	"github.com/mcpward/mcpward/ports"
)

// harness returns a conformance harness maker for the ports S that *Store
// implements: every harness is a fresh schema of the test database, every
// handle a Store of its own on it (closed when the subtest ends), and the
// schema name is the Location child processes open (they reach the same
// cluster through the environment TestMain set).
func harness[S any](as func(*pgstore.Store) S) func(*testing.T) conformance.Harness[S] {
	open := func(t *testing.T, schema string) S { return as(openStore(t, schema, nil)) }
	return func(t *testing.T) conformance.Harness[S] {
		needPG(t)
		schema := newSchema()
		return conformance.Harness[S]{
			Open:     func(t *testing.T) S { return open(t, schema) },
			Location: schema,
			Attach:   open,
		}
	}
}

// TestConformance runs the shared suites of every port a *Store implements,
// unchanged, the cross-process subtests included (they re-execute this test
// binary, which then reuses this process's cluster).
func TestConformance(t *testing.T) {
	t.Run("TokenStore", func(t *testing.T) {
		conformance.RunTokenStore(t, harness(func(s *pgstore.Store) ports.TokenStore { return s }))
	})
	t.Run("Locker", func(t *testing.T) {
		conformance.RunLocker(t, harness(func(s *pgstore.Store) ports.Locker { return s }))
	})
	t.Run("ApprovalStore", func(t *testing.T) {
		conformance.RunApprovalStore(t, harness(func(s *pgstore.Store) ports.ApprovalStore { return s }))
	})
	t.Run("AuditLog", func(t *testing.T) {
		conformance.RunAuditLog(t, harness(func(s *pgstore.Store) ports.AuditLog { return s }))
	})
}
