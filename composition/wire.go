//go:build wireinject

package composition

import (
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

// Custom builds a Host on ports the host supplies: the path the
// conformance suites exist for.
func Custom(p Ports, cfg Config) (*Host, error) {
	wire.Build(wire.FieldsOf(new(Ports), "Tokens", "Locker", "Approvals", "Audit", "Trust"), HostSet)
	return nil, nil
}
