package composition

import (
	"context"

	"github.com/mcpward/mcpward/adapters/keychainstore"
	"github.com/mcpward/mcpward/adapters/pgstore"
	"github.com/mcpward/mcpward/composition/internal/filestate"
	"github.com/mcpward/mcpward/ports"
)

// The profiles as this package's own tests build them: the profile
// packages (desktop, headless, shared, memory) import composition, so its
// internal tests cannot import them. Each does what its profile's
// injector does; the profiles themselves are tested in their packages.

// StateDir is a state directory (desktop and headless).
type StateDir string

// StoreSubdir is the filestore's subdirectory of a StateDir.
const StoreSubdir = filestate.StoreSubdir

// Headless is headless.New.
func Headless(dir StateDir, trust ports.WorkspaceTrust, cfg Config) (*Host, func(), error) {
	s, cleanup, err := filestate.Open(string(dir))
	if err != nil {
		return nil, nil, err
	}
	h, err := New(Ports{Tokens: s, Locker: s, Approvals: s, Audit: s, Trust: trust}, cfg)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return h, cleanup, nil
}

// Desktop is desktop.New.
func Desktop(dir StateDir, kc *keychainstore.Options, trust ports.WorkspaceTrust, cfg Config) (*Host, func(), error) {
	s, cleanup, err := filestate.Open(string(dir))
	if err != nil {
		return nil, nil, err
	}
	ks, err := keychainstore.New(kc)
	if err == nil {
		var h *Host
		if h, err = New(Ports{Tokens: ks, Locker: s, Approvals: s, Audit: s, Trust: trust}, cfg); err == nil {
			return h, cleanup, nil
		}
	}
	cleanup()
	return nil, nil, err
}

// SharedStore is shared.Store.
type SharedStore struct {
	DSN     string
	Keyring pgstore.Keyring
	Schema  string
}

// Shared is shared.New.
func Shared(ctx context.Context, store SharedStore, trust ports.WorkspaceTrust, cfg Config) (*Host, func(), error) {
	s, err := pgstore.Open(ctx, store.DSN, pgstore.Options{Keyring: store.Keyring, Schema: store.Schema})
	if err != nil {
		return nil, nil, err
	}
	h, err := New(Ports{Tokens: s, Locker: s, Approvals: s, Audit: s, Trust: trust}, cfg)
	if err != nil {
		_ = s.Close()
		return nil, nil, err
	}
	return h, func() { _ = s.Close() }, nil
}

// Custom is New.
func Custom(p Ports, cfg Config) (*Host, error) { return New(p, cfg) }
