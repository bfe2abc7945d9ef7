package approve_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/approve"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/revoke"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdtest"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
)

func TestNewCmdApprove(t *testing.T) {
	run := cmdtest.NewWorld(t, nil).Factory(t)
	var got *approve.Options
	capture := func(_ context.Context, o *approve.Options) error { got = o; return nil }
	require.NoError(t, cmdtest.Execute(run.F, approve.NewCmdApprove(run.F, capture), "--trust-workspace", "weather"))
	assert.Equal(t, []string{"weather"}, got.Names)
	assert.True(t, run.F.Globals.TrustWorkspace, "global flags reach the factory")
	err := cmdtest.Execute(run.F, approve.NewCmdApprove(run.F, capture))
	assert.True(t, cmdutil.IsUsage(err))
}

func TestApproveThenRevoke(t *testing.T) {
	w := cmdtest.NewWorld(t, map[string]string{"ws/.mcp.json": `{"mcpServers": {"weather": {"command": "weather-mcp"}}}`})
	run := w.Factory(t)
	require.NoError(t, approve.Run(context.Background(), &approve.Options{IO: run.IO, App: run.F.App, Names: []string{"weather"}}))
	assert.Contains(t, run.Out.String(), "approved weather (project ")
	assert.Contains(t, run.Out.String(), "weather is now allowed (approved)")

	run = w.Factory(t)
	err := approve.Run(context.Background(), &approve.Options{IO: run.IO, App: run.F.App, Names: []string{"ghost"}})
	assert.Error(t, err)

	run = w.Factory(t)
	require.NoError(t, revoke.Run(context.Background(), &revoke.Options{IO: run.IO, App: run.F.App, Name: "weather"}))
	assert.Equal(t, "revoked 1 approval of weather\n", run.Out.String())

	run = w.Factory(t)
	require.NoError(t, revoke.Run(context.Background(), &revoke.Options{IO: run.IO, App: run.F.App, Name: "weather", JSON: true}))
	assert.JSONEq(t, `{"name": "weather", "revoked": 0}`, run.Out.String(), "revoking nothing succeeds")
}

func TestApproveAllConfirmsOnATerminal(t *testing.T) {
	files := map[string]string{"ws/.mcp.json": `{"mcpServers": {"a": {"command": "a-mcp"}, "b": {"command": "b-mcp"}}}`}
	tests := []struct {
		name     string
		tty      bool
		answer   string
		yes      bool
		approved bool
		err      func(error) bool
	}{
		{name: "yes on a terminal", tty: true, answer: "y\n", approved: true},
		{name: "YES on a terminal", tty: true, answer: " YES \n", approved: true},
		{name: "no on a terminal", tty: true, answer: "n\n", err: func(err error) bool { return errors.Is(err, cmdutil.ErrSilent) }},
		{name: "no answer on a terminal", tty: true, answer: "", err: func(err error) bool { return errors.Is(err, cmdutil.ErrSilent) }},
		{name: "no terminal", tty: false, answer: "y\n", err: cmdutil.IsUsage},
		{name: "no terminal with --yes", tty: false, yes: true, approved: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := cmdtest.NewWorld(t, files)
			run := w.Factory(t)
			run.IO.SetStdinTTY(tt.tty)
			run.IO.In = strings.NewReader(tt.answer)
			err := approve.Run(context.Background(), &approve.Options{IO: run.IO, App: run.F.App, All: true, Yes: tt.yes})
			if tt.err != nil {
				require.Error(t, err)
				assert.True(t, tt.err(err), "%v", err)
			} else {
				require.NoError(t, err)
			}
			assert.Contains(t, run.ErrOut.String(), "2 servers awaiting approval:", "what will be approved is shown first")
			if tt.tty && !tt.yes {
				assert.Contains(t, run.ErrOut.String(), "Approve these 2 servers? [y/N] ")
			}
			check := w.Factory(t)
			a, err := check.F.App()
			require.NoError(t, err)
			left := approve.Awaiting(a.Evaluate(context.Background()))
			if tt.approved {
				assert.Empty(t, left)
				assert.Contains(t, run.Out.String(), "approved a (project ")
				assert.Contains(t, run.Out.String(), "approved b (project ")
			} else {
				assert.Len(t, left, 2, "nothing was approved")
				assert.Empty(t, run.Out.String())
			}
		})
	}
}
