package revoke

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdtest"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
)

func TestNewCmdRevoke(t *testing.T) {
	run := cmdtest.NewWorld(t, nil).Factory(t)
	var got *Options
	capture := func(_ context.Context, o *Options) error { got = o; return nil }
	require.NoError(t, cmdtest.Execute(run.F, NewCmdRevoke(run.F, capture), "weather", "--json"))
	assert.Equal(t, "weather", got.Name)
	assert.True(t, got.JSON)
	assert.True(t, cmdutil.IsUsage(cmdtest.Execute(run.F, NewCmdRevoke(run.F, capture))))
}

func TestRunJSON(t *testing.T) {
	w := cmdtest.NewWorld(t, map[string]string{"ws/.mcp.json": `{"mcpServers": {"weather": {"command": "weather-mcp"}}}`})
	run := w.Factory(t)
	a, err := run.F.App()
	require.NoError(t, err)
	_, err = a.Host.Approve(context.Background(), a.LibrarySources(), "weather")
	require.NoError(t, err)
	require.NoError(t, Run(context.Background(), &Options{IO: run.IO, App: run.F.App, Name: "weather", JSON: true}))
	assert.JSONEq(t, `{"name": "weather", "revoked": 1}`, run.Out.String())
}
