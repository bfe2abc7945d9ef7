//go:build wireinject

package headless

import (
	"github.com/google/wire"
	"github.com/mcpward/mcpward/adapters/filestore"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/internal/filestate"
	"github.com/mcpward/mcpward/ports"
)

// New builds a Host keeping tokens, approvals, audit and locks on files
// under dir (see the package documentation for the layout). trust may be
// nil (an untrusted workspace of unknown repository). It fails with
// ReasonStateDirUnusable, or as composition.New does. The cleanup closes
// the file store; call it after the Host's last use.
func New(dir string, trust ports.WorkspaceTrust, cfg composition.Config) (*composition.Host, func(), error) {
	wire.Build(
		filestate.Set,
		wire.Bind(new(ports.TokenStore), new(*filestore.Store)),
		wire.Struct(new(composition.Ports), "*"),
		composition.New,
	)
	return nil, nil, nil
}
