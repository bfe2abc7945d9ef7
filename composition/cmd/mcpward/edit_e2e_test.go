package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// editProjectJSON is a project file with keys around mcpServers, in an
// order no encoder would choose, and a number kept as written.
const editProjectJSON = `{"$schema": "https://example.com/schema.json",
 "mcpServers": {"zeta": {"command": "zeta-mcp", "args": ["--n", "1"]}, "alpha": {"type": "http", "url": "https://alpha.example.com/mcp"}, "copied": {"command": "c", "disabled": true}},
 "disabledMcpServers": [],
 "settings": {"retries": 3.50, "name": "<keep & order>"}}`

// TestCLIEdit runs add, add-json, get and remove on one world, comparing
// each transcript with its golden file, then checks the files written:
// every other key in its order, modes kept or chosen, and no canary value
// printed anywhere.
func TestCLIEdit(t *testing.T) {
	w := newWorld(t, map[string]string{
		"ws/.mcp.json": editProjectJSON,
	}, "WEATHER_API_KEY=weather-value", "NOTES_TOKEN=cnry-env-token-value")
	project := filepath.Join(w.ws, ".mcp.json")
	require.NoError(t, os.Chmod(project, 0o640))
	steps := []struct {
		name string
		args []string
		code int
	}{
		{"add_stdio", []string{"add", "weather", "-e", "WEATHER_API_KEY=${WEATHER_API_KEY}", "-e", "DEBUG=1", "--cwd", "/srv", "--", "weather-mcp", "--units", "metric"}, 0},
		{"add_stdio_json", []string{"add", "--json", "w2", "--", "w2-mcp", "-v"}, 0},
		{"add_http_project", []string{"add", "--scope", "project", "--transport", "http", "-H", "Authorization: Bearer ${NOTES_TOKEN}", "notes", "https://notes.example.com/mcp"}, 0},
		{"add_http_project_json", []string{"add", "--scope", "project", "--transport", "http", "--json", "n2", "https://n2.example.com/mcp"}, 0},
		{"add_exists", []string{"add", "weather", "--", "other-mcp"}, 1},
		{"add_secret_project", []string{"add", "--scope", "project", "leak", "-e", "API_KEY=cnry-env-literal", "--", "leak-mcp", "--token", "cnry-arg-literal"}, 1},
		{"add_secret_project_json", []string{"add", "--scope", "project", "--json", "--transport", "http", "-H", "X-Api-Key: cnry-header-literal", "leak", "https://leak.example.com/mcp?token=cnry-query"}, 1},
		{"add_secret_local", []string{"add", "leak", "-e", "API_KEY=cnry-env-literal", "--", "leak-mcp"}, 1},
		{"add_secret_allowed", []string{"add", "--allow-literal-secret", "leak", "-e", "API_KEY=cnry-env-literal", "--", "leak-mcp", "--token", "cnry-arg-literal"}, 0},
		{"add_secret_allowed_json", []string{"add", "--allow-literal-secret", "--scope", "user", "--json", "--transport", "http", "-H", "Authorization: Bearer cnry-header-literal", "leak2", "https://leak2.example.com/mcp"}, 0},
		// The project scope's override writes it, with a warning that a
		// commit shares it (#25 item 9).
		{"add_allow_project", []string{"add", "--allow-literal-secret", "--scope", "project", "committed", "-e", "API_KEY=shared-literal-value", "--", "leak-mcp"}, 0},
		{"add_plain_values", []string{"add", "plain", "-e", "TOKEN_ENDPOINT=https://auth.example.com/token", "-e", "PASSWORD_MIN_LENGTH=12", "--", "plain-mcp", "--token-file", "/run/secrets/t"}, 0},
		{"add_bad_env", []string{"add", "leak", "-e", "cnry-no-equals", "--", "leak-mcp"}, 2},
		{"add_sse", []string{"add", "--transport", "sse", "old", "https://old.example.com/sse"}, 2},
		{"add_json", []string{"add-json", "--scope", "user", "files", `{"command": "files-mcp", "args": ["--read-only"], "env": {"ROOT": "/data"}}`}, 0},
		{"add_json_json", []string{"add-json", "--json", "remote", `{"url": "https://remote.example.com/mcp", "requiresTrustedWorkspace": true}`}, 0},
		{"add_json_unknown_field", []string{"add-json", "copied", `{"command": "x", "autoApprove": ["cnry-tool"]}`}, 1},
		{"add_json_client_secret", []string{"add-json", "copied", `{"type": "http", "url": "https://x.example.com/mcp", "oauth": {"clientSecret": "cnry-client-secret"}}`}, 1},
		{"add_json_not_object", []string{"add-json", "copied", `["cnry"]`}, 2},
		{"get", []string{"get", "weather"}, 0},
		{"get_json", []string{"get", "notes", "--json"}, 0},
		{"get_scope", []string{"get", "--scope", "project", "zeta"}, 0},
		{"get_scope_json", []string{"get", "--scope", "user", "--json", "files"}, 0},
		{"get_scope_malformed", []string{"get", "--scope", "project", "copied"}, 0},
		{"get_scope_malformed_json", []string{"get", "-s", "project", "--json", "copied"}, 0},
		{"get_scope_elsewhere", []string{"get", "--scope", "user", "weather"}, 1},
		{"remove", []string{"remove", "weather"}, 0},
		{"remove_json", []string{"remove", "--scope", "project", "--json", "n2"}, 0},
		{"remove_again", []string{"remove", "weather"}, 1},
		{"remove_other_scope", []string{"remove", "--scope", "local", "files"}, 1},
		// Without --scope, remove finds the one scope that defines the
		// name (#25 item 8); two scopes are named, nothing removed.
		{"remove_finds_scope", []string{"remove", "files"}, 0},
		{"add_json_user_w2", []string{"add-json", "--scope", "user", "w2", `{"command": "w2-mcp"}`}, 0},
		{"remove_ambiguous", []string{"remove", "w2"}, 1},
		{"remove_nowhere", []string{"remove", "--scope", "user", "ghost"}, 1},
		{"add_foreign_file", []string{"--user", "$ROOT/home/.claude.json", "add", "--scope", "user", "x", "--", "x-mcp"}, 1},
	}
	var all strings.Builder
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			r := w.run(t, s.args...)
			assert.Equal(t, s.code, r.code, "exit code\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
			tr := w.transcript(s.args, r)
			golden(t, "edit_"+s.name, tr)
			all.WriteString(r.stdout + r.stderr)
		})
	}
	assert.NotContains(t, all.String(), canary, "no secret value is ever printed")

	// The project file: its other keys in their order, its mode kept.
	data, err := os.ReadFile(project)
	require.NoError(t, err)
	golden(t, "edit_project_file", string(data))
	fi, err := os.Stat(project)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())

	// New private files are 0600 (the local one outside the working tree,
	// its directory 0700), and the allowed literals did reach them.
	assert.NoDirExists(t, filepath.Join(w.ws, ".mcpward"), "nothing private in the working tree")
	dfi, err := os.Stat(filepath.Dir(w.private()))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), dfi.Mode().Perm())
	for _, p := range []string{w.private(), filepath.Join(w.root, "config", "mcpward", "mcp.json")} {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), p)
	}
	local, err := os.ReadFile(w.private())
	require.NoError(t, err)
	assert.Contains(t, string(local), "cnry-env-literal", "--allow-literal-secret kept it in the private file")
	assert.NotContains(t, string(data), canary, "no literal reached the project file")
	// No temporary file is left beside any of them.
	for _, dir := range []string{w.ws, filepath.Dir(w.private()), filepath.Join(w.root, "config", "mcpward")} {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			assert.NotContains(t, e.Name(), ".tmp-", dir)
		}
	}
}

// TestCLIBatch runs approve of several names and --all, revoke of
// nothing, and the refusals that now say why and what to do.
func TestCLIBatch(t *testing.T) {
	w := mainWorld(t)
	base := []string{"--managed", "$ROOT/managed.json", "--plugin", "$ROOT/plugin-a.json"}
	steps := []struct {
		name string
		args []string
		code int
	}{
		{"approve_all_no_tty", []string{"approve", "--all"}, 2},
		{"approve_all_with_name", []string{"approve", "--all", "weather"}, 2},
		{"approve_no_name", []string{"approve"}, 2},
		{"approve_several", []string{"approve", "weather", "corp-search", "files", "nope", "lint"}, 1},
		{"approve_several_json", []string{"approve", "--json", "weather", "notes"}, 1},
		{"approve_user", []string{"approve", "files"}, 1},
		{"approve_all_yes", []string{"approve", "--all", "--yes"}, 0},
		{"approve_all_nothing", []string{"approve", "--all"}, 0},
		{"approve_all_nothing_json", []string{"approve", "--all", "--json"}, 0},
		{"revoke_weather", []string{"revoke", "weather"}, 0},
		{"revoke_nothing", []string{"revoke", "weather"}, 0},
		{"revoke_nothing_json", []string{"revoke", "weather", "--json"}, 0},
		{"approve_all_yes_json", []string{"approve", "--all", "--yes", "--json"}, 0},
		{"login_not_oauth", []string{"login", "weather"}, 1},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			args := append(append([]string{}, base...), s.args...)
			r := w.run(t, args...)
			assert.Equal(t, s.code, r.code, "exit code\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
			golden(t, "batch_"+s.name, w.transcript(args, r))
		})
	}
}
