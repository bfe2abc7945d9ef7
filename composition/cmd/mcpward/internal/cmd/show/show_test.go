package show

import (
	"context"
	"encoding/json"
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
	assert.Regexp(t, `(?m)^  env +KEY=<redacted:[0-9a-f]{8}>$`, out, "a value under a credential-shaped key shows as its digest")
	assert.Regexp(t, `(?m)^  runs in +the workspace root \(no cwd\)$`, out)
	assert.Contains(t, out, `"metric\u202e"`)
	assert.Contains(t, out, `"a\x1b[2Jb"`)
	assert.NotContains(t, out, "\x1b")
	assert.NotContains(t, out, "secret-value")

	run = w.Factory(t)
	err := Run(context.Background(), &Options{IO: run.IO, App: run.F.App, Name: "ghost"})
	assert.Equal(t, refusal.Config, refusal.ClassOf(err))
	assert.Equal(t, "unknown_server", refusal.ReasonOf(err))
}

// The timeout and the tool filters of a definition are shown when present,
// in the text and in --json.
func TestRunTimeoutAndFilters(t *testing.T) {
	w := cmdtest.NewWorld(t, map[string]string{"ws/.mcp.json": `{"mcpServers": {
  "gh": {"command": "gh-mcp", "timeout": 1500, "includeTools": ["get_issue", "list\u001b[2J"], "excludeTools": ["delete_repo"]},
  "none": {"command": "none-mcp", "includeTools": []},
  "plain": {"command": "plain-mcp"}
}}`})
	run := w.Factory(t)
	require.NoError(t, Run(context.Background(), &Options{IO: run.IO, App: run.F.App, Name: "gh"}))
	out := run.Out.String()
	assert.Regexp(t, `(?m)^  include tools +get_issue, list\\x1b\[2J \(only these\)$`, out)
	assert.Regexp(t, `(?m)^  exclude tools +delete_repo$`, out)
	assert.Regexp(t, `(?m)^  timeout +1\.5s per call \(shortens --call-timeout, never lengthens it\)$`, out)
	assert.NotContains(t, out, "\x1b")

	run = w.Factory(t)
	require.NoError(t, Run(context.Background(), &Options{IO: run.IO, App: run.F.App, Name: "gh", JSON: true}))
	var j struct {
		Projection struct {
			IncludeTools []string `json:"includeTools"`
			ExcludeTools []string `json:"excludeTools"`
			Timeout      int64    `json:"timeout"`
		} `json:"projection"`
	}
	require.NoError(t, json.Unmarshal([]byte(run.Out.String()), &j))
	assert.Equal(t, []string{"get_issue", "list\x1b[2J"}, j.Projection.IncludeTools)
	assert.Equal(t, []string{"delete_repo"}, j.Projection.ExcludeTools)
	assert.Equal(t, int64(1500), j.Projection.Timeout)

	run = w.Factory(t)
	require.NoError(t, Run(context.Background(), &Options{IO: run.IO, App: run.F.App, Name: "none"}))
	assert.Regexp(t, `(?m)^  include tools +none \(an empty includeTools admits no tool\)$`, run.Out.String())

	run = w.Factory(t)
	require.NoError(t, Run(context.Background(), &Options{IO: run.IO, App: run.F.App, Name: "plain"}))
	assert.NotContains(t, run.Out.String(), "include tools")
	assert.NotContains(t, run.Out.String(), "exclude tools")
	assert.NotContains(t, run.Out.String(), "timeout")
}
