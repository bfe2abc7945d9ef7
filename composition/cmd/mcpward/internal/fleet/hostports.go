package fleet

import (
	"context"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/progress"
	"github.com/mcpward/mcpward/core/supervisor"
)

// HostPorts are the host ports a run offers the servers it connects
// (--elicitation, --roots); the zero value offers none.
type HostPorts struct {
	Elicitation *composition.ElicitationOptions
	Roots       *composition.RootsOptions
}

// ConnectWithPorts is Connect offering hp to the servers.
func ConnectWithPorts(ctx context.Context, a *app.App, names []string, sup *supervisor.Options, rep *progress.Reporter, hp HostPorts) *composition.Fleet {
	opts := &composition.ConnectOptions{Names: names, Supervisor: sup, Elicitation: hp.Elicitation, Roots: hp.Roots}
	if rep != nil {
		opts.OnStatus = rep.OnStatus
	}
	return a.Host.Connect(ctx, a.LibrarySources(), opts)
}
