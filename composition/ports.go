package composition

import "github.com/mcpward/mcpward/ports"

// Ports are the stores and workspace trust a Host is built on (New).
// Approvals and Audit are required; Trust nil means an untrusted
// workspace of unknown repository (see activation.Options); Tokens and
// Locker may be nil for a host that never signs in anywhere.
type Ports struct {
	Tokens    ports.TokenStore
	Locker    ports.Locker
	Approvals ports.ApprovalStore
	Audit     ports.AuditLog
	Trust     ports.WorkspaceTrust
}
