package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
)

// TestCLISignIn runs login and logout where they need no network: the
// refusals, logout without a credential, and an oauth server nobody signed
// in to, whose connection fails by name before anything is sent. The
// whole sign-in flow is tested in composition (TestOAuthSignInConnectSignOut)
// against a TLS authorization server, which the CLI's strict egress policy
// (https to public addresses only) would not reach on loopback.
func TestCLISignIn(t *testing.T) {
	w := newWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {
  "signin": {"type": "http", "url": "https://mcp.example.com/mcp", "oauth": {"clientId": "cli-test"}},
  "local":  {"command": "/bin/true"}
}}`,
	})
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{name: "login of an unknown server", args: []string{"login", "ghost"}, code: 1, stderr: "unknown_server"},
		{name: "login of a stdio server", args: []string{"login", "local"}, code: 1, stderr: "not_oauth"},
		{name: "logout without a sign-in", args: []string{"logout", "signin"}, stdout: "signed out of signin\n"},
		{name: "logout of a stdio server", args: []string{"logout", "local"}, code: 1, stderr: "not_oauth"},
		{name: "tools before signing in", args: []string{"tools", "signin"}, code: 1,
			stderr: `failed (auth_required oauth_sign_in_required); sign in with "mcpward login signin"`},
		{name: "usage", args: []string{"login"}, code: 2, stderr: "login takes 1 argument(s), got 0"},
		{name: "--client-secret-stdin without a secret", args: []string{"login", "--client-secret-stdin", "signin"}, code: 2, stderr: "no client secret on stdin"},
		{name: "--client-credentials without a secret", args: []string{"login", "--client-credentials", "signin"}, code: 2, stderr: "no client secret on stdin"},
		{name: "--private-key-file unreadable", args: []string{"login", "--client-credentials", "--private-key-file", "/nonexistent.pem", "signin"}, code: 2, stderr: "--private-key-file cannot be read"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := w.run(t, tt.args...)
			assert.Equal(t, tt.code, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
			if tt.stdout != "" {
				assert.Equal(t, tt.stdout, r.stdout)
			}
			assert.Contains(t, r.stderr, tt.stderr)
			assert.NotContains(t, r.stdout+r.stderr, "cli-test", "the client id is never printed")
		})
	}
	t.Run("show says the sign-in state", func(t *testing.T) {
		r := w.run(t, "show", "signin")
		require.Equal(t, 0, r.code, r.stderr)
		assert.Regexp(t, `(?m)^  sign-in +signed_out \(sign in with "mcpward login signin"\)$`, r.stdout)
		r = w.run(t, "show", "signin", "--json")
		require.Equal(t, 0, r.code, r.stderr)
		var got struct {
			SignIn string `json:"signIn"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
		assert.Equal(t, "signed_out", got.SignIn)
		r = w.run(t, "show", "local", "--json")
		assert.NotContains(t, r.stdout, "signIn", "only OAuth servers have a sign-in state")
	})
	t.Run("logout --json", func(t *testing.T) {
		r := w.run(t, "logout", "signin", "--json")
		require.Equal(t, 0, r.code, r.stderr)
		var got view.SignIn
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
		assert.Equal(t, view.SignIn{Name: "signin", State: "signed_out"}, got)
	})
}
