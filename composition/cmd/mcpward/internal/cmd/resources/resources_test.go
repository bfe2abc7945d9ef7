package resources

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdtest"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/entries"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/testserver"
)

func TestMain(m *testing.M) {
	testserver.Main()
	os.Exit(m.Run())
}

func TestNewCmdResources(t *testing.T) {
	run := cmdtest.NewWorld(t, nil).Factory(t)
	var got *Options
	require.NoError(t, cmdtest.Execute(run.F, NewCmdResources(run.F, func(_ context.Context, o *Options) error { got = o; return nil }), "a"))
	assert.Equal(t, []string{"a"}, got.Names)
}

func world(t *testing.T, mode string) *cmdtest.World {
	return cmdtest.NewWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {"t": {"command": ` + cmdtest.JSONString(cmdtest.Executable(t)) +
			`, "env": {"` + testserver.Env + `": "` + mode + `"}}}}`,
	})
}

func TestRun(t *testing.T) {
	run := world(t, testserver.ModeContent).Factory(t)
	opts := &Options{IO: run.IO, App: run.F.App, Clock: run.Clock, ConnectTimeout: time.Minute}
	require.NoError(t, Run(context.Background(), opts))
	out := run.Out.String()
	assert.Contains(t, out, "t: connected\n")
	assert.Contains(t, out, "  test://small")
	assert.Contains(t, out, "  template test://files/{+path}")

	run = world(t, testserver.ModeContent).Factory(t)
	opts = &Options{IO: run.IO, App: run.F.App, Clock: run.Clock, ConnectTimeout: time.Minute, JSON: true}
	require.NoError(t, Run(context.Background(), opts))
	var got []entries.ServerResources
	require.NoError(t, json.Unmarshal([]byte(run.Out.String()), &got))
	require.Len(t, got, 1)
	assert.Len(t, got[0].Resources, 2)
	require.Len(t, got[0].Templates, 2)
	assert.Equal(t, []string{"path"}, got[0].Templates[0].Variables)
}

func TestRunNoServers(t *testing.T) {
	run := cmdtest.NewWorld(t, nil).Factory(t)
	opts := &Options{IO: run.IO, App: run.F.App, Clock: run.Clock}
	require.NoError(t, Run(context.Background(), opts))
	assert.Contains(t, run.Out.String(), "No MCP servers are defined")
}
