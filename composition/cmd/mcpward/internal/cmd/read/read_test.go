package read

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
	"github.com/mcpward/mcpward/core/refusal"
)

func TestMain(m *testing.M) {
	testserver.Main()
	os.Exit(m.Run())
}

func TestNewCmdRead(t *testing.T) {
	run := cmdtest.NewWorld(t, nil).Factory(t)
	var got *Options
	require.NoError(t, cmdtest.Execute(run.F, NewCmdRead(run.F, func(_ context.Context, o *Options) error { got = o; return nil }), "srv", "x://y"))
	assert.Equal(t, "srv", got.Server)
	assert.Equal(t, "x://y", got.URI)
	err := cmdtest.Execute(run.F, NewCmdRead(run.F, func(context.Context, *Options) error { return nil }), "srv")
	assert.True(t, cmdutil.IsUsage(err), "%v", err)
}

func world(t *testing.T) *cmdtest.World {
	return cmdtest.NewWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {"t": {"command": ` + cmdtest.JSONString(cmdtest.Executable(t)) +
			`, "env": {"` + testserver.Env + `": "` + testserver.ModeContent + `"}}}}`,
	})
}

func opts(run *cmdtest.Run, uri, args string) *Options {
	return &Options{IO: run.IO, App: run.F.App, Clock: run.Clock, Server: "t", URI: uri, Args: args,
		Timeouts: fleet.Timeouts{Connect: time.Minute, Call: time.Minute}}
}

func TestRunText(t *testing.T) {
	run := world(t).Factory(t)
	require.NoError(t, Run(context.Background(), opts(run, "test://small", "")))
	assert.Equal(t, "small body\\x1b]0;pwned title\\x07\n", run.Out.String())
}

func TestRunBigIsCut(t *testing.T) {
	run := world(t).Factory(t)
	o := opts(run, "test://big", "")
	o.JSON = true
	require.NoError(t, Run(context.Background(), o))
	var got entries.ReadResult
	require.NoError(t, json.Unmarshal([]byte(run.Out.String()), &got))
	assert.True(t, got.Truncated)
	require.Len(t, got.Contents, 1)
	assert.Len(t, *got.Contents[0].Text, catalog.DefaultReadCap, "cut to the read cap")

	run = world(t).Factory(t)
	require.NoError(t, Run(context.Background(), opts(run, "test://big", "")))
	assert.Contains(t, run.ErrOut.String(), "cut to the read cap")
}

func TestRunHugeIsRefused(t *testing.T) {
	run := world(t).Factory(t)
	err := Run(context.Background(), opts(run, "test://huge", ""))
	assert.Equal(t, "receive_cap_exceeded", refusal.ReasonOf(err), "refused by the transport before it is parsed")
	assert.Equal(t, refusal.Protocol, refusal.ClassOf(err))
}

func TestRunTemplate(t *testing.T) {
	run := world(t).Factory(t)
	require.NoError(t, Run(context.Background(), opts(run, "test://files/{+path}", `{"path":"a/b"}`)))
	assert.Contains(t, run.Out.String(), "small body")

	run = world(t).Factory(t)
	err := Run(context.Background(), opts(run, "test://host{+path}", `{"path":"@evil.example/x"}`))
	assert.Equal(t, catalog.ReasonTemplateOrigin, refusal.ReasonOf(err), "an expansion to another origin is refused")
	assert.Equal(t, refusal.Refused, refusal.ClassOf(err))

	run = world(t).Factory(t)
	err = Run(context.Background(), opts(run, "test://small", `{"a":"b"}`))
	assert.True(t, cmdutil.IsUsage(err), "--args without a template")

	err = Run(context.Background(), &Options{IO: run.IO, App: run.F.App, Server: "t", URI: "test://small", Complete: "x"})
	assert.True(t, cmdutil.IsUsage(err), "--complete without a template")
}
