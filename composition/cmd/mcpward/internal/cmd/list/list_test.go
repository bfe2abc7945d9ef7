package list

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdtest"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
)

func TestNewCmdList(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		json  bool
		usage bool
	}{
		{name: "no flags", args: nil},
		{name: "json", args: []string{"--json"}, json: true},
		{name: "json before", args: []string{"--json=true"}, json: true},
		{name: "an argument", args: []string{"extra"}, usage: true},
		{name: "unknown flag", args: []string{"--args", "{}"}, usage: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := cmdtest.NewWorld(t, nil).Factory(t)
			var got *Options
			err := cmdtest.Execute(run.F, NewCmdList(run.F, func(_ context.Context, o *Options) error { got = o; return nil }), tt.args...)
			if tt.usage {
				assert.True(t, cmdutil.IsUsage(err), "%v", err)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, got)
			assert.Equal(t, tt.json, got.JSON)
		})
	}
}

const project = `{"mcpServers": {
  "weather": {"command": "weather-mcp"},
  "evil\u001b]0;pwned\u0007\u202e": {"command": "evil-mcp"}
}}`

func TestRun(t *testing.T) {
	w := cmdtest.NewWorld(t, map[string]string{"ws/.mcp.json": project})

	run := w.Factory(t)
	require.NoError(t, Run(context.Background(), &Options{IO: run.IO, App: run.F.App}))
	out := run.Out.String()
	assert.Contains(t, out, "NAME")
	assert.Regexp(t, `(?m)^weather +denied +project +stdio`, out)
	assert.Contains(t, out, `evil\x1b]0;pwned\a\u202e`, "a name from a file is shown escaped")
	assert.NotContains(t, out, "\x1b")
	assert.NotContains(t, out, "\u202e")

	run = w.Factory(t)
	require.NoError(t, Run(context.Background(), &Options{IO: run.IO, App: run.F.App, JSON: true}))
	var got []map[string]any
	require.NoError(t, json.Unmarshal([]byte(run.Out.String()), &got))
	require.Len(t, got, 2)
	assert.Equal(t, "weather", got[1]["name"])
	assert.NotContains(t, run.Out.String(), "\u202e", "JSON is terminal-safe")
	assert.NotContains(t, run.Out.String(), "\x1b")

	empty := cmdtest.NewWorld(t, nil).Factory(t)
	require.NoError(t, Run(context.Background(), &Options{IO: empty.IO, App: empty.F.App}))
	assert.Contains(t, empty.Out.String(), "No MCP servers are defined")
}
