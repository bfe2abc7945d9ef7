//go:build wireinject

package memory

import (
	"github.com/google/wire"
	"github.com/mcpward/mcpward/adapters/memstore"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/ports"
)

// New builds a Host whose approvals, audit trail (the newest
// memstore.DefaultMaxAuditRecords records) and locks live in memory, with
// no token store. trust may be nil (an untrusted workspace of unknown
// repository). It fails with ReasonOAuthStoreEphemeral when cfg.OAuth is
// set, or as composition.New does. Every Host it returns has stores of
// its own; it is safe for concurrent use like any Host.
func New(trust ports.WorkspaceTrust, cfg composition.Config) (*composition.Host, error) {
	wire.Build(
		openStore,
		wire.Bind(new(ports.Locker), new(*memstore.Store)),
		wire.Bind(new(ports.ApprovalStore), new(*memstore.Store)),
		wire.Bind(new(ports.AuditLog), new(*memstore.Store)),
		wire.Struct(new(composition.Ports), "Locker", "Approvals", "Audit", "Trust"),
		composition.New,
	)
	return nil, nil
}
