package prompts

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdtest"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/entries"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/fleet"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/testserver"
	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/ports"
)

func TestMain(m *testing.M) {
	testserver.Main()
	os.Exit(m.Run())
}

func TestNewCmdPrompts(t *testing.T) {
	run := cmdtest.NewWorld(t, nil).Factory(t)
	var got *Options
	err := cmdtest.Execute(run.F, NewCmdPrompts(run.F, func(_ context.Context, o *Options) error { got = o; return nil }), "a", "b", "--connect-timeout", "2m")
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, got.Names)
	assert.Equal(t, 2*time.Minute, got.ConnectTimeout)

	err = cmdtest.Execute(run.F, NewCmdPrompts(run.F, func(context.Context, *Options) error { return nil }), "--args", "{}")
	assert.True(t, cmdutil.IsUsage(err), "%v", err)
	got = nil
	require.NoError(t, cmdtest.Execute(run.F, NewCmdPrompts(run.F, func(_ context.Context, o *Options) error { got = o; return nil })))
	assert.Nil(t, got.Names)
	assert.Equal(t, fleet.DefaultConnectTimeout, got.ConnectTimeout)
}

func world(t *testing.T, mode string) *cmdtest.World {
	return cmdtest.NewWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {"t": {"command": ` + cmdtest.JSONString(cmdtest.Executable(t)) +
			`, "env": {"` + testserver.Env + `": "` + mode + `"}}}}`,
	})
}

func TestRunHostile(t *testing.T) {
	run := world(t, testserver.ModeContent).Factory(t)
	opts := &Options{IO: run.IO, App: run.F.App, Clock: run.Clock, ConnectTimeout: time.Minute}
	require.NoError(t, Run(context.Background(), opts))
	out := run.Out.String()
	assert.Contains(t, out, "t: connected\n")
	assert.Contains(t, out, "  mcp__t__greet  t/greet  Greets.\\x1b[2J\n", "a description is shown escaped")
	assert.Contains(t, out, "      who (required): whom\n")
	assert.Contains(t, out, "  rejected prompts huge: too_many_arguments\n", "a prompt of 10,000 arguments is refused by name")
	assert.NotContains(t, out, "\x1b")
}

func TestRunJSON(t *testing.T) {
	run := world(t, testserver.ModeContent).Factory(t)
	opts := &Options{IO: run.IO, App: run.F.App, Clock: run.Clock, ConnectTimeout: time.Minute, JSON: true, Names: []string{"t"}}
	require.NoError(t, Run(context.Background(), opts))
	var got []entries.ServerPrompts
	require.NoError(t, json.Unmarshal([]byte(run.Out.String()), &got))
	require.Len(t, got, 1)
	assert.Equal(t, []entries.Prompt{{Name: "mcp__t__greet", ServerPrompt: "greet", Description: "Greets.\x1b[2J",
		Arguments: []ports.PromptArgument{{Name: "who", Description: "whom", Required: true}}}}, got[0].Prompts)
	assert.Equal(t, []catalog.Rejected{{Server: "t", Kind: ports.ListPrompts, Name: "huge", Reason: catalog.ReasonTooManyArguments}}, got[0].Rejected)
}

func TestRunFailedServer(t *testing.T) {
	run := world(t, testserver.ModeExit).Factory(t)
	opts := &Options{IO: run.IO, App: run.F.App, Clock: run.Clock, ConnectTimeout: time.Minute}
	assert.ErrorIs(t, Run(context.Background(), opts), cmdutil.ErrSilent)
	assert.Contains(t, run.Out.String(), "t: failed (")
}
