package show

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdtest"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/core/refusal"
)

func TestNewCmdShow(t *testing.T) {
	run := cmdtest.NewWorld(t, nil).Factory(t)
	var got *Options
	capture := func(_ context.Context, o *Options) error { got = o; return nil }
	require.NoError(t, cmdtest.Execute(run.F, NewCmdShow(run.F, capture), "weather", "--json"))
	assert.Equal(t, "weather", got.Name)
	assert.True(t, got.JSON)
	for _, args := range [][]string{nil, {"a", "b"}} {
		err := cmdtest.Execute(run.F, NewCmdShow(run.F, capture), args...)
		assert.True(t, cmdutil.IsUsage(err), "%v: %v", args, err)
		assert.ErrorContains(t, err, "show takes 1 argument(s)")
	}
}

func TestRun(t *testing.T) {
	w := cmdtest.NewWorld(t, map[string]string{"ws/.mcp.json": `{"mcpServers": {
  "weather": {"command": "weather-mcp", "args": ["--units", "metric\u202e", "a\u001b[2Jb"], "env": {"KEY": "secret-value"}}
}}`})
	run := w.Factory(t)
	require.NoError(t, Run(context.Background(), &Options{IO: run.IO, App: run.F.App, Name: "weather"}))
	out := run.Out.String()
	assert.Contains(t, out, "weather: denied (not_approved)")
	assert.Regexp(t, `(?m)^  env keys +KEY \(values never shown\)$`, out)
	assert.Contains(t, out, `"metric\u202e"`)
	assert.Contains(t, out, `"a\x1b[2Jb"`)
	assert.NotContains(t, out, "\x1b")
	assert.NotContains(t, out, "secret-value")

	run = w.Factory(t)
	err := Run(context.Background(), &Options{IO: run.IO, App: run.F.App, Name: "ghost"})
	assert.Equal(t, refusal.Config, refusal.ClassOf(err))
	assert.Equal(t, "unknown_server", refusal.ReasonOf(err))
}
