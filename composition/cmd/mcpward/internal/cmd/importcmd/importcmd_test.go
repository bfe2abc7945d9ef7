package importcmd

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/list"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdtest"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/editing"
	"github.com/mcpward/mcpward/core/refusal"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create it")
	assert.Equal(t, string(want), got)
}

// claudeJSON is a ~/.claude.json with user and local servers and the
// oddities an import reports.
const claudeJSON = `{
  "numStartups": 3,
  "mcpServers": {
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${GITHUB_PAT}"}},
    "fetch": {"command": "uvx", "args": ["mcp-server-fetch"], "disabled": true, "autoApprove": ["fetch"]},
    "linear": {"type": "sse", "url": "https://mcp.linear.app/sse"},
    "weather": {"command": "other-weather"}
  },
  "projects": {
    "$WS": {"mcpServers": {"notes": {"command": "notes-mcp", "alwaysAllow": ["read"], "trust": true, "autoApprove": ["*"]}}}
  }
}`

func newWorld(t *testing.T, files map[string]string) *cmdtest.World {
	w := cmdtest.NewWorld(t, nil)
	for name, data := range files {
		w.Write(t, name, strings.ReplaceAll(data, "$WS", w.WS))
	}
	return w
}

func TestNewCmdImport(t *testing.T) {
	run := cmdtest.NewWorld(t, nil).Factory(t)
	var got *Options
	capture := func(_ context.Context, o *Options) error { got = o; return nil }
	require.NoError(t, cmdtest.Execute(run.F, NewCmdImport(run.F, capture), "--from", "codex", "--scope", "user", "--dry-run", "--force", "--file", "x.toml", "--json"))
	assert.Equal(t, "codex", got.From)
	assert.Equal(t, ScopeUser, got.Scope)
	assert.Equal(t, "x.toml", got.File)
	assert.True(t, got.DryRun && got.Force && got.JSON)

	require.NoError(t, cmdtest.Execute(run.F, NewCmdImport(run.F, capture), "--from", "vscode"))
	assert.Equal(t, ScopeLocal, got.Scope, "local is the default scope, as in Claude Code")

	for _, args := range [][]string{{}, {"--from", "windsurf"}, {"--from", "codex", "--scope", "global"}, {"--from", "codex", "extra"}} {
		assert.True(t, cmdutil.IsUsage(cmdtest.Execute(run.F, NewCmdImport(run.F, capture), args...)), args)
	}
}

// execute runs import on a new factory of w and returns stdout with the
// world's root as $ROOT.
func execute(t *testing.T, w *cmdtest.World, args ...string) (string, error) {
	t.Helper()
	run := w.Factory(t)
	err := cmdtest.Execute(run.F, NewCmdImport(run.F, nil), args...)
	return strings.ReplaceAll(strings.ReplaceAll(run.Out.String(), w.Private(), "$PRIVATE"), w.Root, "$ROOT"), err
}

func TestImportClaudeCodeUser(t *testing.T) {
	w := newWorld(t, map[string]string{
		"home/.claude.json": claudeJSON,
		"config/mcpward/mcp.json": `{
  "theme": "dark",
  "mcpServers": {
    "weather": {"command": "weather-mcp"}
  },
  "zeta": 1
}`,
	})
	out, err := execute(t, w, "--from", "claude-code", "--scope", "user")
	require.NoError(t, err)
	golden(t, "claude_code_user", out)
	data, err := os.ReadFile(filepath.Join(w.Root, "config/mcpward/mcp.json"))
	require.NoError(t, err)
	golden(t, "claude_code_user_written", string(data))

	// A second run imports nothing new: every name is now defined.
	out, err = execute(t, w, "--from", "claude-code", "--scope", "user", "--json")
	require.NoError(t, err)
	var j JSON
	require.NoError(t, json.Unmarshal([]byte(out), &j))
	assert.Empty(t, j.Imported)
	assert.Equal(t, []string{"fetch", "github"}, j.Skipped[:2])
}

func TestImportForceReplacesInPlace(t *testing.T) {
	w := newWorld(t, map[string]string{
		"home/.claude.json":       claudeJSON,
		"config/mcpward/mcp.json": `{"mcpServers": {"weather": {"command": "weather-mcp"}, "zz": {"command": "z"}}}`,
	})
	require.NoError(t, os.Chmod(filepath.Join(w.Root, "config/mcpward/mcp.json"), 0o640))
	out, err := execute(t, w, "--from", "claude-code", "--scope", "user", "--force", "--json")
	require.NoError(t, err)
	golden(t, "claude_code_user_force_json", out)
	path := filepath.Join(w.Root, "config/mcpward/mcp.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	golden(t, "claude_code_user_force_written", string(data))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "mode bits kept")
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left behind")
}

func TestImportDryRunWritesNothing(t *testing.T) {
	w := newWorld(t, map[string]string{"home/.claude.json": claudeJSON})
	out, err := execute(t, w, "--from", "claude-code", "--dry-run")
	require.NoError(t, err)
	golden(t, "claude_code_local_dry_run", out)
	_, err = os.Stat(w.Private())
	assert.True(t, os.IsNotExist(err))
	_, err = os.Stat(filepath.Join(w.WS, ".mcpward", "local.json"))
	assert.True(t, os.IsNotExist(err))
}

func TestImportMalformedSource(t *testing.T) {
	w := newWorld(t, map[string]string{"ws/.vscode/mcp.json": "{\n  \"servers\": {\n    \"a\": {\"command\" \"x\"}\n  }\n}"})
	_, err := execute(t, w, "--from", "vscode")
	var r *refusal.Error
	require.ErrorAs(t, err, &r)
	assert.Equal(t, "malformed_document", r.Reason)
	assert.Equal(t, "line 3, column 21: a missing colon after a key", r.Detail)
}

func TestImportMissingSource(t *testing.T) {
	w := newWorld(t, nil)
	_, err := execute(t, w, "--from", "gemini", "--scope", "user")
	var r *refusal.Error
	require.ErrorAs(t, err, &r)
	assert.Equal(t, ReasonSourceUnreadable, r.Reason)
}

func TestImportClaudeCodeProjectIsAlreadyOurs(t *testing.T) {
	_, err := execute(t, newWorld(t, nil), "--from", "claude-code", "--scope", "project")
	var r *refusal.Error
	require.ErrorAs(t, err, &r)
	assert.Equal(t, ReasonAlreadyOurs, r.Reason)
}

func TestImportMalformedTargetLeftAlone(t *testing.T) {
	w := newWorld(t, map[string]string{"home/.claude.json": claudeJSON, "ws/.mcp.json": `{"mcpServers": [1]}`})
	_, err := execute(t, w, "--from", "cursor", "--scope", "project", "--file", filepath.Join(w.Root, "home/.claude.json"))
	var r *refusal.Error
	require.ErrorAs(t, err, &r)
	assert.Equal(t, ReasonTargetMalformed, r.Reason)
	data, err := os.ReadFile(filepath.Join(w.WS, ".mcp.json"))
	require.NoError(t, err)
	assert.Equal(t, `{"mcpServers": [1]}`, string(data))
}

// TestImportedGrantsGrantNothing: trust, autoApprove and alwaysAllow are
// dropped: the imported server still awaits approval in "list".
func TestImportedGrantsGrantNothing(t *testing.T) {
	w := newWorld(t, map[string]string{"home/.claude.json": claudeJSON})
	out, err := execute(t, w, "--from", "claude-code", "--scope", "local")
	require.NoError(t, err)
	assert.Contains(t, out, "notes trust: grant_not_honoured")
	assert.Contains(t, out, "notes autoApprove: grant_not_honoured")
	assert.Contains(t, out, "notes alwaysAllow: grant_not_honoured")

	run := w.Factory(t)
	run.F.Globals.JSON = true
	require.NoError(t, list.Run(context.Background(), &list.Options{IO: run.IO, App: run.F.App, JSON: true}))
	var servers []struct {
		Name   string `json:"name"`
		State  string `json:"state"`
		Usable bool   `json:"usable"`
		Reason string `json:"reason"`
		Tier   string `json:"tier"`
	}
	require.NoError(t, json.Unmarshal([]byte(run.Out.String()), &servers))
	require.Len(t, servers, 1)
	assert.Equal(t, "notes", servers[0].Name)
	assert.Equal(t, "local", servers[0].Tier)
	assert.False(t, servers[0].Usable)
	assert.Equal(t, "denied", servers[0].State)
	assert.Equal(t, "not_approved", servers[0].Reason)
}

// TestImportLiteralCredentialsStayOutOfProject: a literal credential never
// reaches the shared .mcp.json; the same servers import into the private
// local file.
func TestImportLiteralCredentialsStayOutOfProject(t *testing.T) {
	const gemini = `{"mcpServers": {
  "literal-header": {"httpUrl": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ghp_abcdefghijklmnopqrstuvwxyz0123456789"}},
  "literal-env": {"command": "srv", "env": {"API_KEY": "sk-live-1234567890abcdef"}},
  "literal-arg": {"command": "srv", "args": ["--token", "abc123secret"]},
  "literal-url": {"httpUrl": "https://api.example.com/mcp?token=abc123secret"},
  "templated": {"httpUrl": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer $API_TOKEN"}, "env": {}},
  "plain": {"command": "srv", "args": ["--port", "8080"], "env": {"LOG_LEVEL": "debug"}}
}}`
	w := newWorld(t, map[string]string{"ws/.gemini/settings.json": gemini})
	out, err := execute(t, w, "--from", "gemini", "--scope", "project")
	require.NoError(t, err)
	golden(t, "gemini_project_literal_credentials", out)
	data, err := os.ReadFile(filepath.Join(w.WS, ".mcp.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(data), "ghp_")
	assert.NotContains(t, string(data), "sk-live")
	assert.NotContains(t, string(data), "abc123secret")

	out, err = execute(t, w, "--from", "gemini", "--scope", "local", "--file", ".gemini/settings.json", "--json")
	require.NoError(t, err)
	var j JSON
	require.NoError(t, json.Unmarshal([]byte(out), &j))
	assert.Equal(t, []string{"literal-arg", "literal-env", "literal-header", "literal-url", "plain", "templated"}, j.Imported)
	// The private scope takes them, and says which literals it copied:
	// fields and the ${VAR} form, never a value.
	var copied []string
	for _, c := range j.Copied {
		for _, f := range c.Fields {
			copied = append(copied, c.Server+" "+f.Field)
		}
	}
	assert.Equal(t, []string{"literal-arg args[1]", "literal-env env.API_KEY", "literal-header headers.Authorization", "literal-url url"}, copied)
	for _, v := range []string{"ghp_", "sk-live", "abc123secret"} {
		assert.NotContains(t, out, v, "a copied value never reaches the report")
	}
}

// TestImportPrivateScopeSaysWhichLiteralsItCopied: an import into the
// local or user file copies literal credentials as written (that file is
// the user's own and outside the repository) and names each one with the
// ${VAR} that would keep it out of files; a dry run says it would.
func TestImportPrivateScopeSaysWhichLiteralsItCopied(t *testing.T) {
	const claude = `{"mcpServers": {
  "gh": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ghp_abcdefghijklmnopqrstuvwxyz0123456789"}},
  "db": {"command": "db-mcp", "env": {"DB_PASSWORD": "hunter2-but-longer", "PASSWORD_MIN_LENGTH": "12", "TOKEN_ENDPOINT": "https://auth.example.com/token"}},
  "clean": {"command": "srv", "args": ["--token-file", "/run/secrets/t"]}
}}`
	for _, dry := range []bool{true, false} {
		w := newWorld(t, map[string]string{"home/.claude.json": claude})
		args := []string{"--from", "claude-code", "--scope", "user"}
		name := "claude_code_user_copied_literals"
		if dry {
			args = append(args, "--dry-run")
			name += "_dry_run"
		}
		out, err := execute(t, w, args...)
		require.NoError(t, err)
		golden(t, name, out)
		for _, v := range []string{"ghp_", "hunter2"} {
			assert.NotContains(t, out, v)
		}
	}
}

// The target is read and written by internal/editing, as add and remove
// do: another host's own file is never written, a malformed overlay
// leaves the file alone, the overlay grows in place, and a symbolic link
// is written through.
func TestImportTargetThroughEditing(t *testing.T) {
	t.Run("foreign target", func(t *testing.T) {
		w := newWorld(t, map[string]string{"home/.claude.json": claudeJSON, "home/.cursor/mcp.json": `{"mcpServers": {}}`})
		_, err := execute(t, w, "--from", "claude-code", "--scope", "user", "--user", filepath.Join(w.Root, "home/.cursor/mcp.json"))
		var r *refusal.Error
		require.ErrorAs(t, err, &r)
		assert.Equal(t, editing.ReasonForeignFile, r.Reason)
		data, err := os.ReadFile(filepath.Join(w.Root, "home/.cursor/mcp.json"))
		require.NoError(t, err)
		assert.Equal(t, `{"mcpServers": {}}`, string(data))
	})
	t.Run("malformed overlay", func(t *testing.T) {
		const target = `{"mcpServers": {}, "disabledMcpServers": [1]}`
		w := newWorld(t, map[string]string{"home/.claude.json": claudeJSON, "config/mcpward/mcp.json": target})
		_, err := execute(t, w, "--from", "claude-code", "--scope", "user")
		var r *refusal.Error
		require.ErrorAs(t, err, &r)
		assert.Equal(t, ReasonTargetMalformed, r.Reason)
		data, err := os.ReadFile(filepath.Join(w.Root, "config/mcpward/mcp.json"))
		require.NoError(t, err)
		assert.Equal(t, target, string(data))
	})
	t.Run("overlay grows in place, link kept", func(t *testing.T) {
		w := newWorld(t, map[string]string{"home/.claude.json": claudeJSON,
			"real/mcp.json": `{"disabledMcpServers": ["old"], "mcpServers": {"old": {"command": "o"}}, "z": true}`})
		link := filepath.Join(w.Root, "config/mcpward/mcp.json")
		require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o700))
		require.NoError(t, os.Symlink(filepath.Join(w.Root, "real/mcp.json"), link))
		_, err := execute(t, w, "--from", "claude-code", "--scope", "user")
		require.NoError(t, err)
		fi, err := os.Lstat(link)
		require.NoError(t, err)
		assert.Equal(t, os.ModeSymlink, fi.Mode()&os.ModeSymlink, "the link stays a link")
		var doc struct {
			Disabled []string                   `json:"disabledMcpServers"`
			Servers  map[string]json.RawMessage `json:"mcpServers"`
		}
		data, err := os.ReadFile(filepath.Join(w.Root, "real/mcp.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &doc))
		assert.Equal(t, []string{"old", "fetch"}, doc.Disabled)
		assert.Contains(t, doc.Servers, "github")
		assert.Regexp(t, `^\{\n  "disabledMcpServers": \[`, string(data), "root key order kept")
		assert.Regexp(t, `"z": true\n\}\n$`, string(data))
	})
}
