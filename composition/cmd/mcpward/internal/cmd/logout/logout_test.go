package logout

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdtest"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
)

func TestNewCmdLogout(t *testing.T) {
	run := cmdtest.NewWorld(t, nil).Factory(t)
	var got *Options
	capture := func(_ context.Context, o *Options) error { got = o; return nil }
	require.NoError(t, cmdtest.Execute(run.F, NewCmdLogout(run.F, capture), "notes"))
	assert.Equal(t, "notes", got.Name)
	assert.False(t, got.JSON)
	assert.True(t, cmdutil.IsUsage(cmdtest.Execute(run.F, NewCmdLogout(run.F, capture), "a", "b")))
}

func TestRunJSON(t *testing.T) {
	w := cmdtest.NewWorld(t, map[string]string{"config/mcpward/mcp.json": `{"mcpServers": {
  "signin": {"type": "http", "url": "https://mcp.example.com/mcp", "oauth": {"clientId": "cli-test"}}}}`})
	run := w.Factory(t)
	require.NoError(t, Run(context.Background(), &Options{IO: run.IO, App: run.F.App, Name: "signin", JSON: true}))
	var got view.SignIn
	require.NoError(t, json.Unmarshal([]byte(run.Out.String()), &got))
	assert.Equal(t, view.SignIn{Name: "signin", State: "signed_out"}, got)
}
