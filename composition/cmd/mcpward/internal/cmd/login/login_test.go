package login_test

import (
	"context"
	"strings"
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

	// A workload's token that cannot be read is refused before anything is
	// sent, with what to do, and without the path.
	run = w.Factory(t)
	err = login.Run(context.Background(), &login.Options{IO: run.IO, App: run.F.App, Name: "signin", Timeout: login.DefaultTimeout,
		WorkloadTokenFile: "/nonexistent/cnry-token-path"})
	assert.Equal(t, "workload_token_unavailable", refusal.ReasonOf(err))
	var noted *cmdutil.NotedError
	require.ErrorAs(t, err, &noted)
	assert.Contains(t, noted.Note, "--workload-identity-token-file")
	assert.NotContains(t, err.Error()+noted.Note, "cnry-token-path")

	// An ID token file that cannot be read is a usage error naming the flag.
	run = w.Factory(t)
	run.IO.In = strings.NewReader("client-secret\n")
	err = login.Run(context.Background(), &login.Options{IO: run.IO, App: run.F.App, Name: "signin", Timeout: login.DefaultTimeout,
		EnterpriseManaged: true, IDTokenFile: "/nonexistent/cnry-id-token", IdPTokenEndpoint: "https://idp.example.com/token"})
	assert.True(t, cmdutil.IsUsage(err))
	assert.ErrorContains(t, err, "--id-token-file cannot be read")
	assert.NotContains(t, err.Error(), "cnry")
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
	require.NoError(t, cmdtest.Execute(run.F, login.NewCmdLogin(run.F, runF),
		"--workload-identity-token-file", "/var/run/tok", "--workload-issuer", "https://idp", "--client-id", "wl", "notes"))
	assert.Equal(t, "/var/run/tok", in.WorkloadTokenFile)
	assert.Equal(t, "https://idp", in.WorkloadIssuer)
	assert.Equal(t, "wl", in.ClientID)
	require.NoError(t, cmdtest.Execute(run.F, login.NewCmdLogin(run.F, runF),
		"--enterprise-managed", "--id-token-file", "id.jwt", "--idp-token-endpoint", "https://idp/token",
		"--idp-client-id", "m", "--idp-client-secret-file", "s", "--client-id", "xaa", "notes"))
	assert.True(t, in.EnterpriseManaged)
	assert.Equal(t, "id.jwt", in.IDTokenFile)
	assert.Equal(t, "https://idp/token", in.IdPTokenEndpoint)
	assert.Equal(t, "m", in.IdPClientID)
	assert.Equal(t, "s", in.IdPClientSecretFile)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--callback-port", "70000", "notes"}, "--callback-port must be a TCP port"},
		{[]string{"--client-id", "bot", "notes"}, "go with --client-credentials"},
		{[]string{"--private-key-file", "k.pem", "notes"}, "go with --client-credentials"},
		{[]string{"--client-credentials", "--callback-port", "1", "notes"}, "means nothing without a browser"},
		{[]string{"--client-credentials", "--client-secret-stdin", "--private-key-file", "k.pem", "notes"}, "not both"},
		{[]string{"--client-credentials", "--workload-identity-token-file", "t", "notes"}, "choose one"},
		{[]string{"--enterprise-managed", "--workload-identity-token-file", "t", "notes"}, "choose one"},
		{[]string{"--workload-identity-token-file", "t", "--private-key-file", "k.pem", "notes"}, "takes no client secret or key"},
		{[]string{"--workload-identity-token-file", "t", "--client-secret-stdin", "notes"}, "takes no client secret or key"},
		{[]string{"--workload-issuer", "i", "notes"}, "--workload-issuer goes with"},
		{[]string{"--id-token-file", "f", "notes"}, "go with --enterprise-managed"},
		{[]string{"--enterprise-managed", "--id-token-file", "f", "notes"}, "needs --id-token-file and --idp-token-endpoint"},
		{[]string{"--enterprise-managed", "--idp-token-endpoint", "https://i/t", "notes"}, "needs --id-token-file and --idp-token-endpoint"},
	} {
		err := cmdtest.Execute(run.F, login.NewCmdLogin(run.F, runF), tt.args...)
		assert.True(t, cmdutil.IsUsage(err), "%v", tt.args)
		assert.ErrorContains(t, err, tt.want)
	}
}
