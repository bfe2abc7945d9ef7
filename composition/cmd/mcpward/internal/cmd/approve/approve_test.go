package approve_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/approve"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/revoke"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdtest"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
)

func TestNewCmdApprove(t *testing.T) {
	run := cmdtest.NewWorld(t, nil).Factory(t)
	var got *approve.Options
	capture := func(_ context.Context, o *approve.Options) error { got = o; return nil }
	require.NoError(t, cmdtest.Execute(run.F, approve.NewCmdApprove(run.F, capture), "--trust-workspace", "weather"))
	assert.Equal(t, []string{"weather"}, got.Names)
	assert.True(t, run.F.Globals.TrustWorkspace, "global flags reach the factory")
	err := cmdtest.Execute(run.F, approve.NewCmdApprove(run.F, capture))
	assert.True(t, cmdutil.IsUsage(err))
}

func TestApproveThenRevoke(t *testing.T) {
	w := cmdtest.NewWorld(t, map[string]string{"ws/.mcp.json": `{"mcpServers": {"weather": {"command": "weather-mcp"}}}`})
	run := w.Factory(t)
	require.NoError(t, approve.Run(context.Background(), &approve.Options{IO: run.IO, App: run.F.App, Names: []string{"weather"}}))
	assert.Contains(t, run.Out.String(), "approved weather (project ")
	assert.Contains(t, run.Out.String(), "weather is now allowed (approved)")

	run = w.Factory(t)
	err := approve.Run(context.Background(), &approve.Options{IO: run.IO, App: run.F.App, Names: []string{"ghost"}})
	assert.Error(t, err)

	run = w.Factory(t)
	require.NoError(t, revoke.Run(context.Background(), &revoke.Options{IO: run.IO, App: run.F.App, Name: "weather"}))
	assert.Equal(t, "revoked 1 approval of weather\n", run.Out.String())

	run = w.Factory(t)
	require.NoError(t, revoke.Run(context.Background(), &revoke.Options{IO: run.IO, App: run.F.App, Name: "weather", JSON: true}))
	assert.JSONEq(t, `{"name": "weather", "revoked": 0}`, run.Out.String(), "revoking nothing succeeds")
}
