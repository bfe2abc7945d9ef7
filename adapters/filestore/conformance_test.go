package filestore_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/filestore"
	"github.com/mcpward/mcpward/conformance"
	"github.com/mcpward/mcpward/ports"
)

// harness returns a conformance harness maker for the ports S that *Store
// implements: every harness is a fresh directory, every handle a Store of
// its own on it (closed when the subtest ends), and the directory is the
// Location child processes open.
func harness[S any](as func(*filestore.Store) S) func(*testing.T) conformance.Harness[S] {
	open := func(t *testing.T, dir string) S {
		s, err := filestore.Open(dir)
		require.NoError(t, err, "filestore.Open")
		t.Cleanup(func() { _ = s.Close() })
		return as(s)
	}
	return func(t *testing.T) conformance.Harness[S] {
		dir := filepath.Join(t.TempDir(), "store")
		return conformance.Harness[S]{
			Open:     func(t *testing.T) S { return open(t, dir) },
			Location: dir,
			Attach:   open,
		}
	}
}

// TestConformance runs the conformance suites of every port a *Store
// implements, the cross-process ones included (they re-execute this test
// binary).
func TestConformance(t *testing.T) {
	t.Run("TokenStore", func(t *testing.T) {
		conformance.RunTokenStore(t, harness(func(s *filestore.Store) ports.TokenStore { return s }))
	})
	t.Run("Locker", func(t *testing.T) {
		conformance.RunLocker(t, harness(func(s *filestore.Store) ports.Locker { return s }))
	})
	t.Run("ApprovalStore", func(t *testing.T) {
		conformance.RunApprovalStore(t, harness(func(s *filestore.Store) ports.ApprovalStore { return s }))
	})
	t.Run("AuditLog", func(t *testing.T) {
		conformance.RunAuditLog(t, harness(func(s *filestore.Store) ports.AuditLog { return s }))
	})
}
