package login_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/login"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/logout"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdtest"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/core/refusal"
)

func TestNewCmdLoginLogout(t *testing.T) {
	run := cmdtest.NewWorld(t, nil).Factory(t)
	var in *login.Options
	require.NoError(t, cmdtest.Execute(run.F, login.NewCmdLogin(run.F, func(_ context.Context, o *login.Options) error { in = o; return nil }), "notes"))
	assert.Equal(t, "notes", in.Name)
	assert.Equal(t, login.DefaultTimeout, in.Timeout)
	var out *logout.Options
	require.NoError(t, cmdtest.Execute(run.F, logout.NewCmdLogout(run.F, func(_ context.Context, o *logout.Options) error { out = o; return nil }), "--json", "notes"))
	assert.Equal(t, "notes", out.Name)
	assert.True(t, out.JSON)
	err := cmdtest.Execute(run.F, login.NewCmdLogin(run.F, nil))
	assert.True(t, cmdutil.IsUsage(err))
	assert.ErrorContains(t, err, "login takes 1 argument(s), got 0")
}

func TestRun(t *testing.T) {
	w := cmdtest.NewWorld(t, map[string]string{"config/mcpward/mcp.json": `{"mcpServers": {
  "signin": {"type": "http", "url": "https://mcp.example.com/mcp", "oauth": {"clientId": "cli-test"}},
  "local":  {"command": "/bin/true"}
}}`})
	run := w.Factory(t)
	require.NoError(t, logout.Run(context.Background(), &logout.Options{IO: run.IO, App: run.F.App, Name: "signin"}))
	assert.Equal(t, "signed out of signin\n", run.Out.String())

	run = w.Factory(t)
	err := logout.Run(context.Background(), &logout.Options{IO: run.IO, App: run.F.App, Name: "local"})
	assert.Equal(t, "not_oauth", refusal.ReasonOf(err))
	err = login.Run(context.Background(), &login.Options{IO: run.IO, App: run.F.App, Name: "ghost", Timeout: login.DefaultTimeout})
	assert.Equal(t, "unknown_server", refusal.ReasonOf(err))
}

func TestLoginFlags(t *testing.T) {
	run := cmdtest.NewWorld(t, nil).Factory(t)
	var in *login.Options
	runF := func(_ context.Context, o *login.Options) error { in = o; return nil }
	require.NoError(t, cmdtest.Execute(run.F, login.NewCmdLogin(run.F, runF),
		"--client-secret-stdin", "--callback-port", "8976", "notes"))
	assert.True(t, in.ClientSecretStdin)
	assert.Equal(t, 8976, in.CallbackPort)
	require.NoError(t, cmdtest.Execute(run.F, login.NewCmdLogin(run.F, runF),
		"--client-credentials", "--client-id", "bot", "--private-key-file", "k.pem", "notes"))
	assert.True(t, in.ClientCredentials)
	assert.Equal(t, "bot", in.ClientID)
	assert.Equal(t, "k.pem", in.PrivateKeyFile)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--callback-port", "70000", "notes"}, "--callback-port must be a TCP port"},
		{[]string{"--client-id", "bot", "notes"}, "go with --client-credentials"},
		{[]string{"--private-key-file", "k.pem", "notes"}, "go with --client-credentials"},
		{[]string{"--client-credentials", "--callback-port", "1", "notes"}, "means nothing with --client-credentials"},
		{[]string{"--client-credentials", "--client-secret-stdin", "--private-key-file", "k.pem", "notes"}, "not both"},
	} {
		err := cmdtest.Execute(run.F, login.NewCmdLogin(run.F, runF), tt.args...)
		assert.True(t, cmdutil.IsUsage(err), "%v", tt.args)
		assert.ErrorContains(t, err, tt.want)
	}
}
