package conformance

import (
	"testing"

	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// TestPortstest runs every suite against the in-memory fakes of package
// ports/portstest, which the rest of mcpward's tests rely on. The fakes
// cannot cross processes, so the cross-process subtests skip.
func TestPortstest(t *testing.T) {
	t.Run("TokenStore", func(t *testing.T) {
		RunTokenStore(t, func(*testing.T) Harness[ports.TokenStore] {
			s := portstest.NewTokenStore()
			return Harness[ports.TokenStore]{Open: func(*testing.T) ports.TokenStore { return s }}
		})
	})
	t.Run("Locker", func(t *testing.T) {
		RunLocker(t, func(*testing.T) Harness[ports.Locker] {
			l := portstest.NewLocker()
			return Harness[ports.Locker]{Open: func(*testing.T) ports.Locker { return l }}
		})
	})
	t.Run("ApprovalStore", func(t *testing.T) {
		RunApprovalStore(t, func(*testing.T) Harness[ports.ApprovalStore] {
			s := portstest.NewApprovalStore()
			return Harness[ports.ApprovalStore]{Open: func(*testing.T) ports.ApprovalStore { return s }}
		})
	})
	t.Run("AuditLog", func(t *testing.T) {
		RunAuditLog(t, func(*testing.T) Harness[ports.AuditLog] {
			l := portstest.NewAuditLog()
			return Harness[ports.AuditLog]{Open: func(*testing.T) ports.AuditLog { return l }}
		})
	})
	t.Run("AuditQueue", func(t *testing.T) {
		RunAuditLog(t, func(*testing.T) Harness[ports.AuditLog] {
			l := portstest.NewAuditQueue()
			return Harness[ports.AuditLog]{Open: func(*testing.T) ports.AuditLog { return l }}
		})
	})
}
