//go:build wireinject

package desktop

import (
	"github.com/google/wire"
	"github.com/mcpward/mcpward/adapters/keychainstore"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/internal/filestate"
	"github.com/mcpward/mcpward/ports"
)

// New builds a Host keeping tokens in the OS keychain (kc configures it;
// nil for the defaults) and approvals, audit and locks on files under dir.
// The keychain is not contacted until a token is read or written. trust
// may be nil (an untrusted workspace of unknown repository). It fails with
// headless.ReasonStateDirUnusable, keychainstore's refusal of kc, or as
// composition.New does. The cleanup closes the file store.
func New(dir string, kc *keychainstore.Options, trust ports.WorkspaceTrust, cfg composition.Config) (*composition.Host, func(), error) {
	wire.Build(
		filestate.Set,
		keychainstore.New,
		wire.Bind(new(ports.TokenStore), new(*keychainstore.Store)),
		wire.Struct(new(composition.Ports), "*"),
		composition.New,
	)
	return nil, nil, nil
}
