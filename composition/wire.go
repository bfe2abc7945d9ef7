//go:build wireinject

package composition

import (
	"context"

	"github.com/google/wire"
	"github.com/mcpward/mcpward/adapters/keychainstore"
	"github.com/mcpward/mcpward/ports"
)

// Desktop builds a Host for a person's machine: tokens in the OS keychain
// (kc configures it; nil for the defaults), approvals, audit and locks on
// files under dir. The cleanup closes the file store.
func Desktop(dir StateDir, kc *keychainstore.Options, trust ports.WorkspaceTrust, cfg Config) (*Host, func(), error) {
	wire.Build(FileStoreSet, KeychainTokensSet, HostSet)
	return nil, nil, nil
}

// Headless builds a Host for a machine without a keychain (servers, CI,
// containers): tokens, approvals, audit and locks all on files under dir.
// The cleanup closes the file store.
func Headless(dir StateDir, trust ports.WorkspaceTrust, cfg Config) (*Host, func(), error) {
	wire.Build(AllFilesSet, HostSet)
	return nil, nil, nil
}

// Shared builds a Host for one of many machines sharing a PostgreSQL
// database (store): tokens, approvals, audit and refresh locks all in
// pgstore, so every Host on the database shares one sign-in per server,
// one audit trail and one refresh per credential (see SharedStore and
// adapters/pgstore for what is shared and what stays local). ctx bounds
// opening the store. It fails as OpenSharedStore does, never falling back
// to files. The cleanup closes the store, releasing its locks.
func Shared(ctx context.Context, store SharedStore, trust ports.WorkspaceTrust, cfg Config) (*Host, func(), error) {
	wire.Build(SharedSet, HostSet)
	return nil, nil, nil
}

// Custom builds a Host on ports the host supplies: the path the
// conformance suites exist for.
func Custom(p Ports, cfg Config) (*Host, error) {
	wire.Build(wire.FieldsOf(new(Ports), "Tokens", "Locker", "Approvals", "Audit", "Trust"), HostSet)
	return nil, nil
}
