package doctor

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdtest"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
)

func TestNewCmdDoctor(t *testing.T) {
	run := cmdtest.NewWorld(t, nil).Factory(t)
	var got *Options
	require.NoError(t, cmdtest.Execute(run.F, NewCmdDoctor(run.F, func(_ context.Context, o *Options) error { got = o; return nil }), "--json"))
	assert.True(t, got.JSON)
	assert.True(t, cmdutil.IsUsage(cmdtest.Execute(run.F, NewCmdDoctor(run.F, nil), "x")))
}

func TestRun(t *testing.T) {
	w := cmdtest.NewWorld(t, map[string]string{
		"ws/.mcp.json":            `{"mcpServers": {"weather": {"command": "weather-mcp"}}}`,
		"config/mcpward/mcp.json": `not json`,
	})
	run := w.Factory(t)
	err := Run(context.Background(), &Options{IO: run.IO, App: run.F.AppForDoctor})
	assert.ErrorIs(t, err, cmdutil.ErrSilent, "problems found")
	out := run.Out.String()
	assert.Contains(t, out, "Findings (2):")
	assert.Contains(t, out, "server weather: denied (not_approved)")
	assert.Contains(t, out, "malformed_document")

	run = w.Factory(t)
	_ = Run(context.Background(), &Options{IO: run.IO, App: run.F.AppForDoctor, JSON: true})
	var got doctorJSON
	require.NoError(t, json.Unmarshal([]byte(run.Out.String()), &got))
	assert.False(t, got.OK)
	assert.Len(t, got.Findings, 2)

	clean := cmdtest.NewWorld(t, nil).Factory(t)
	require.NoError(t, Run(context.Background(), &Options{IO: clean.IO, App: clean.F.AppForDoctor}))
	assert.Contains(t, clean.Out.String(), "No problems found.")
}
