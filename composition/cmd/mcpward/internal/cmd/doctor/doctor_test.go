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
	assert.Contains(t, out, "server weather: denied (program_not_found)", "its program is not on the child's PATH")
	assert.Contains(t, out, "Not usable by choice, not problems (1):\n  1. server weather: denied (not_approved)")
	assert.Contains(t, out, "malformed_document")

	run = w.Factory(t)
	_ = Run(context.Background(), &Options{IO: run.IO, App: run.F.AppForDoctor, JSON: true})
	var got doctorJSON
	require.NoError(t, json.Unmarshal([]byte(run.Out.String()), &got))
	assert.False(t, got.OK)
	require.Len(t, got.Findings, 3)
	assert.Equal(t, []bool{false, false, true}, []bool{got.Findings[0].Intentional, got.Findings[1].Intentional, got.Findings[2].Intentional})

	// Only intentional states (awaiting approval, disabled): exit 0, and
	// still listed.
	intentional := cmdtest.NewWorld(t, map[string]string{
		"ws/.mcp.json":            `{"mcpServers": {"weather": {"command": "/bin/sh"}}}`,
		"config/mcpward/mcp.json": `{"mcpServers": {"old": {"command": "/bin/sh"}}, "disabledMcpServers": ["old"]}`,
	}).Factory(t)
	require.NoError(t, Run(context.Background(), &Options{IO: intentional.IO, App: intentional.F.AppForDoctor}))
	out = intentional.Out.String()
	assert.Contains(t, out, "No problems found.")
	assert.Contains(t, out, "Not usable by choice, not problems (2):")
	assert.Contains(t, out, "server old: disabled (disabled)")
	assert.Contains(t, out, "server weather: denied (not_approved)")

	clean := cmdtest.NewWorld(t, nil).Factory(t)
	require.NoError(t, Run(context.Background(), &Options{IO: clean.IO, App: clean.F.AppForDoctor}))
	assert.Contains(t, clean.Out.String(), "No problems found.")
}
