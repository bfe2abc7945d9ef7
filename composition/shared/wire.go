//go:build wireinject

package shared

import (
	"context"

	"github.com/google/wire"
	"github.com/mcpward/mcpward/adapters/pgstore"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/ports"
)

// New builds a Host for one of many machines sharing the PostgreSQL
// database store: tokens, approvals, audit and refresh locks all in
// pgstore (see the package documentation for what is shared and what
// stays local). ctx bounds opening the store (connecting, applying the
// missing schema migrations, checking the key). It fails with the
// *pgstore.Error of pgstore.Open (store_unavailable, store_auth_refused,
// store_tls_failed, store_schema_too_new, store_key_mismatch, ...; never
// the DSN or any part of it), with pgstore.ReasonConfigInvalid when
// store.DSN is empty, or as composition.New does; it never falls back to
// files. The cleanup closes the store, releasing its locks.
func New(ctx context.Context, store Store, trust ports.WorkspaceTrust, cfg composition.Config) (*composition.Host, func(), error) {
	wire.Build(
		openStore,
		wire.Bind(new(ports.TokenStore), new(*pgstore.Store)),
		wire.Bind(new(ports.Locker), new(*pgstore.Store)),
		wire.Bind(new(ports.ApprovalStore), new(*pgstore.Store)),
		wire.Bind(new(ports.AuditLog), new(*pgstore.Store)),
		wire.Struct(new(composition.Ports), "*"),
		composition.New,
	)
	return nil, nil, nil
}
