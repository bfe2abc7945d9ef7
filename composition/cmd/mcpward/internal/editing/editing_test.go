package editing

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

func TestParseMarshalKeepsOrderAndScalars(t *testing.T) {
	in := `{"zeta": 1, "mcpServers": {"b": {"command": "b"}, "a": {"url": "https://a.example"}}, "alpha": {"n": 1.50, "big": 12345678901234567890, "s": "<&>\u2028é", "e": [], "o": {}, "z": null, "t": true}}`
	n, err := Parse([]byte(in))
	require.NoError(t, err)
	want := `{
  "zeta": 1,
  "mcpServers": {
    "b": {
      "command": "b"
    },
    "a": {
      "url": "https://a.example"
    }
  },
  "alpha": {
    "n": 1.50,
    "big": 12345678901234567890,
    "s": "<&>\u2028é",
    "e": [],
    "o": {},
    "z": null,
    "t": true
  }
}
`
	assert.Equal(t, want, string(n.Marshal()))
	again, err := Parse(n.Marshal())
	require.NoError(t, err)
	assert.Equal(t, want, string(again.Marshal()), "a rewrite is stable")
}

func TestParseRefuses(t *testing.T) {
	for _, in := range []string{`{"a":1,"a":2}`, `{"a":{"b":1,"b":1}}`, `{} {}`, `{`, `[1,]`, ``} {
		_, err := Parse([]byte(in))
		assert.Error(t, err, in)
	}
	_, err := Parse([]byte(`{"a":1,"a":2}`))
	assert.ErrorIs(t, err, errDuplicateKey)
}

func TestNodeEdits(t *testing.T) {
	n, err := Parse([]byte(`{"a":1,"b":2,"c":3}`))
	require.NoError(t, err)
	n.Set("b", String("x"))
	n.Set("d", Bool(false))
	assert.True(t, n.Delete("a"))
	assert.False(t, n.Delete("a"))
	assert.Equal(t, "{\n  \"b\": \"x\",\n  \"c\": 3,\n  \"d\": false\n}\n", string(n.Marshal()))
}

func TestPath(t *testing.T) {
	env := app.Env{Cwd: "/ws", Lookup: func(k string) (string, bool) {
		if k == "HOME" {
			return "/home/me", true
		}
		return "", false
	}}
	for _, tt := range []struct {
		o    app.Options
		s    Scope
		want string
	}{
		{app.Options{}, ScopeLocal, app.PrivateFile(env, "/ws")},
		{app.Options{}, ScopeProject, "/ws/.mcp.json"},
		{app.Options{}, ScopeUser, "/home/me/.config/mcpward/mcp.json"},
		{app.Options{Local: app.Path{Value: "x/l.json", Set: true}}, ScopeLocal, "/ws/x/l.json"},
		{app.Options{Project: app.Path{Value: "/p/.mcp.json", Set: true}}, ScopeProject, "/p/.mcp.json"},
		{app.Options{User: app.Path{Value: "u.json", Set: true}}, ScopeUser, "/ws/u.json"},
	} {
		got, err := Path(tt.o, env, tt.s)
		require.NoError(t, err)
		assert.Equal(t, tt.want, got)
	}
	_, err := Path(app.Options{}, app.Env{Cwd: "/ws", Lookup: func(string) (string, bool) { return "", false }}, ScopeUser)
	assert.Error(t, err)
	assert.Equal(t, ports.TierProject, ScopeProject.Tier())
}

func TestScopeValue(t *testing.T) {
	var s Scope
	v := ScopeValue{S: &s}
	require.NoError(t, v.Set("user"))
	assert.Equal(t, ScopeUser, s)
	assert.Error(t, v.Set("global"))
}

// write writes a file with mode and returns its path.
func write(t *testing.T, dir, name, data string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(data), mode))
	require.NoError(t, os.Chmod(p, mode))
	return p
}

func TestLoadPutSaveKeepsEverythingElse(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, ".mcp.json", `{"$schema": "x", "mcpServers": {"b": {"command": "b-mcp", "args": []}}, "disabledMcpServers": ["b"], "other": {"k": [1, 2]}}`, 0o640)
	f, err := Load(ScopeProject, p)
	require.NoError(t, err)
	assert.True(t, f.Exists)
	assert.Equal(t, os.FileMode(0o640), f.Mode)
	f.Put("a", objectOf(t, `{"command": "a-mcp"}`))
	_, err = f.Validate("a")
	require.NoError(t, err)
	require.NoError(t, f.Save())
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, `{
  "$schema": "x",
  "mcpServers": {
    "b": {
      "command": "b-mcp",
      "args": []
    },
    "a": {
      "command": "a-mcp"
    }
  },
  "disabledMcpServers": [
    "b"
  ],
  "other": {
    "k": [
      1,
      2
    ]
  }
}
`, string(data))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "the mode is kept")

	f, err = Load(ScopeProject, p)
	require.NoError(t, err)
	require.True(t, f.Delete("b"))
	require.NoError(t, f.Save())
	data, err = os.ReadFile(p)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"disabledMcpServers": [`, "the overlay stays")
	assert.NotContains(t, string(data), `"b-mcp"`)
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, left, 1, "no temporary file is left")
}

func TestNewFileModes(t *testing.T) {
	for _, tt := range []struct {
		s    Scope
		mode os.FileMode
	}{{ScopeLocal, 0o600}, {ScopeUser, 0o600}, {ScopeProject, 0o644}} {
		t.Run(string(tt.s), func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "sub", "f.json")
			f, err := Load(tt.s, p)
			require.NoError(t, err)
			assert.False(t, f.Exists)
			f.Put("a", objectOf(t, `{"command": "a"}`))
			require.NoError(t, f.Save())
			fi, err := os.Stat(p)
			require.NoError(t, err)
			assert.Equal(t, tt.mode, fi.Mode().Perm())
		})
	}
}

func TestLoadRefusesWhatItCannotRewrite(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"notjson":    `{"mcpServers": `,
		"array":      `[]`,
		"dupkey":     `{"x": 1, "x": 2}`,
		"servers":    `{"mcpServers": []}`,
		"dupservers": `{"mcpServers": {}, "mcpServers": {}}`,
	} {
		p := write(t, dir, name, data, 0o600)
		_, err := Load(ScopeLocal, p)
		assert.Equal(t, ReasonFileNotEditable, refusal.ReasonOf(err), name)
	}
	_, err := Load(ScopeLocal, dir)
	assert.Equal(t, ReasonFileNotEditable, refusal.ReasonOf(err), "a directory")
	f, err := Load(ScopeLocal, write(t, dir, "empty", " \n", 0o600))
	require.NoError(t, err, "an empty file is an empty object")
	assert.True(t, f.Exists)
}

// TestAtomicWriteFailureKeepsOriginal: a write that fails before the
// rename leaves the original file byte for byte, and no temporary file.
func TestAtomicWriteFailureKeepsOriginal(t *testing.T) {
	dir := t.TempDir()
	orig := `{"mcpServers": {"b": {"command": "b-mcp"}}}`
	p := write(t, dir, "local.json", orig, 0o600)
	f, err := Load(ScopeLocal, p)
	require.NoError(t, err)
	f.Put("a", objectOf(t, `{"command": "a"}`))
	var sawTmp string
	beforeRename = func(tmp string) error {
		sawTmp = tmp
		data, err := os.ReadFile(tmp)
		require.NoError(t, err)
		assert.Contains(t, string(data), `"a"`, "the new content is complete before the rename")
		return errors.New("disk on fire")
	}
	t.Cleanup(func() { beforeRename = nil })
	err = f.Save()
	assert.Equal(t, ReasonWriteFailed, refusal.ReasonOf(err))
	data, rerr := os.ReadFile(p)
	require.NoError(t, rerr)
	assert.Equal(t, orig, string(data), "the original survives")
	assert.NoFileExists(t, sawTmp)
	left, _ := os.ReadDir(dir)
	assert.Len(t, left, 1)
}

func TestWriteAtomicFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	target := write(t, dir, "real.json", `{}`, 0o600)
	link := filepath.Join(dir, "link.json")
	require.NoError(t, os.Symlink(target, link))
	require.NoError(t, WriteAtomic(link, []byte("{\"x\": 1}\n"), 0o600))
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode()&os.ModeSymlink, "the link stays a link")
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "{\"x\": 1}\n", string(data))
}

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		entry, detail string
	}{
		{`{"command": "x", "disabled": true}`, "unknown_field, field disabled"},
		{`{"command": "x", "url": "https://x.example"}`, "field_not_for_transport, field url"},
		{`{"type": "sse", "url": "https://x.example"}`, definition.RefusalTransportSSE},
		{`{"type": "http", "url": "https://x.example", "oauth": {"clientSecret": "cnry-s"}}`, definition.RefusalOAuthClientSecret},
		{`{"args": []}`, definition.EntryMissingType + ", field type"},
		{`{"command": ""}`, "invalid_field, field command"},
	} {
		f, err := Load(ScopeLocal, filepath.Join(t.TempDir(), "x.json"))
		require.NoError(t, err)
		f.Put("s", objectOf(t, tt.entry))
		_, err = f.Validate("s")
		var re *refusal.Error
		require.ErrorAs(t, err, &re, tt.entry)
		assert.Equal(t, ReasonEntryInvalid, re.Reason)
		assert.Equal(t, tt.detail, re.Detail)
		assert.NotContains(t, err.Error(), "cnry")
	}
	f, _ := Load(ScopeLocal, filepath.Join(t.TempDir(), "x.json"))
	f.Put("bad name!", objectOf(t, `{"command": "x"}`))
	_, err := f.Validate("bad name!")
	assert.Error(t, err, "an invalid name is refused")
}

func TestFindLiteralSecrets(t *testing.T) {
	tests := []struct {
		name  string
		entry string
		want  []LiteralSecret
	}{
		{"references only", `{"command": "x", "args": ["--token", "${T}", "--api-key=${K}"], "env": {"API_KEY": "${API_KEY}", "DEBUG": "1"}}`, nil},
		{"env under a credential key", `{"command": "x", "env": {"GITHUB_TOKEN": "cnry-gh", "DEBUG": "1"}}`,
			[]LiteralSecret{{Field: "env.GITHUB_TOKEN", Use: "${GITHUB_TOKEN}"}}},
		{"shaped value under a plain key", `{"command": "x", "env": {"FOO": "ghp_cnry0123456789abcdefghijklmnopqrstuvwx"}}`,
			[]LiteralSecret{{Field: "env.FOO", Use: "${FOO}"}}},
		{"argument after a credential flag", `{"command": "x", "args": ["--api-key", "cnry-k", "--port", "80"]}`,
			[]LiteralSecret{{Field: "args[1]", Use: "${API_KEY}"}}},
		{"flag=value argument", `{"command": "x", "args": ["--token=cnry-t"]}`,
			[]LiteralSecret{{Field: "args[0]", Use: "--token=${TOKEN}"}}},
		{"authorization header", `{"type": "http", "url": "https://x.example", "headers": {"Authorization": "Bearer cnry-bearer-123", "Accept": "text/plain"}}`,
			[]LiteralSecret{{Field: "headers.Authorization", Use: "Bearer ${S_TOKEN}"}}},
		{"authorization header reference", `{"type": "http", "url": "https://x.example", "headers": {"Authorization": "Bearer ${T}"}}`, nil},
		{"api key header", `{"type": "http", "url": "https://x.example", "headers": {"X-Api-Key": "cnry-key"}}`,
			[]LiteralSecret{{Field: "headers.X-Api-Key", Use: "${X_API_KEY}"}}},
		{"query token", `{"type": "http", "url": "https://x.example/mcp?token=cnry-q"}`,
			[]LiteralSecret{{Field: "url", Use: "a ${S_TOKEN} reference where the credential stands"}}},
		{"url password", `{"type": "http", "url": "https://u:cnry-p@x.example/mcp"}`,
			[]LiteralSecret{{Field: "url", Use: "a ${S_TOKEN} reference where the credential stands"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := Load(ScopeProject, filepath.Join(t.TempDir(), "x.json"))
			f.Put("s", objectOf(t, tt.entry))
			def, err := f.Validate("s")
			require.NoError(t, err)
			got := FindLiteralSecrets(def)
			assert.Equal(t, tt.want, got)
			for _, g := range got {
				assert.NotContains(t, g.Field+g.Use, "cnry", "a finding never holds the value")
			}
			if len(got) > 0 {
				err := RefuseLiteralSecrets("s", ScopeProject, got)
				assert.Equal(t, ReasonLiteralSecret, refusal.ReasonOf(err))
				var se *SecretError
				require.ErrorAs(t, err, &se)
				assert.NotContains(t, err.Error()+se.Fix(), "cnry")
				assert.Contains(t, se.Fix(), "--allow-literal-secret writes it anyway, and the next commit shares it", "the project file's override says what it costs")
				se = RefuseLiteralSecrets("s", ScopeLocal, got).(*SecretError)
				assert.Contains(t, se.Fix(), "--allow-literal-secret")
			}
		})
	}
	assert.Nil(t, RefuseLiteralSecrets("s", ScopeLocal, nil))
}

func TestVarName(t *testing.T) {
	assert.Equal(t, "API_KEY", varName("--api-key"))
	assert.Equal(t, "X_API_KEY", varName("X-Api-Key"))
	assert.Equal(t, "SECRET_1X", varName("1x"))
	assert.Equal(t, "SECRET_", varName("--"))
}

func objectOf(t *testing.T, s string) *Node {
	t.Helper()
	n, err := Parse([]byte(s))
	require.NoError(t, err)
	require.True(t, n.IsObject())
	return n
}

// TestSaveRefusesAChangedFile: an edit that read the file before another
// edit wrote it writes nothing, so the other edit is not lost.
func TestSaveRefusesAChangedFile(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "local.json", `{"mcpServers": {}}`, 0o600)
	f, err := Load(ScopeLocal, p)
	require.NoError(t, err)
	other := `{"mcpServers": {"b": {"command": "b"}}}`
	require.NoError(t, os.WriteFile(p, []byte(other), 0o600))
	f.Put("a", objectOf(t, `{"command": "a"}`))
	assert.Equal(t, ReasonFileChanged, refusal.ReasonOf(f.Save()))
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, other, string(data))

	// A file created meanwhile counts as changed too.
	q := filepath.Join(dir, "new.json")
	f, err = Load(ScopeLocal, q)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(q, []byte(other), 0o600))
	f.Put("a", objectOf(t, `{"command": "a"}`))
	assert.Equal(t, ReasonFileChanged, refusal.ReasonOf(f.Save()))
}

func TestLiteral(t *testing.T) {
	for v, want := range map[string]bool{
		"${A}": false, "${A}:${B}": false, "Bearer ${T}": false, " ${A} ": false, "": false, "-": false,
		"x": true, "Bearer x": true, "${A}x": true, "Bearer": true,
	} {
		assert.Equal(t, want, literal(v), v)
	}
}

func TestForeignHostFilesAreNeverWritten(t *testing.T) {
	home := t.TempDir()
	for path, host := range map[string]string{
		filepath.Join(home, ".claude.json"): "Claude Code",
		filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json"): "Claude Desktop",
		filepath.Join(home, ".cursor", "mcp.json"):                                                    "Cursor",
		filepath.Join(home, "ws", ".vscode", "mcp.json"):                                              "VS Code",
		filepath.Join(home, ".gemini", "settings.json"):                                               "Gemini CLI",
		filepath.Join(home, ".codex", "config.toml"):                                                  "Codex",
	} {
		assert.Equal(t, host, ForeignHost(path), path)
		_, err := Load(ScopeUser, path)
		assert.Equal(t, ReasonForeignFile, refusal.ReasonOf(err), path)
	}
	for _, ok := range []string{filepath.Join(home, "ws", ".mcp.json"), filepath.Join(home, ".config", "mcpward", "mcp.json"), filepath.Join(home, "ws", ".mcpward", "local.json")} {
		assert.Empty(t, ForeignHost(ok), ok)
	}
	// A link to a foreign file is foreign too.
	target := write(t, home, ".claude.json", `{"mcpServers": {}}`, 0o600)
	link := filepath.Join(home, "mine.json")
	require.NoError(t, os.Symlink(target, link))
	assert.Equal(t, "Claude Code", ForeignHost(link))
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2.50,"x",null,true,{"b":{}}]}`, `{"a":1,"a":2}`, `"\u2028<&>"`, `[`, `1e999`, `{"mcpServers":{"x":{"command":"y"}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := Parse(data)
		if err != nil {
			return
		}
		out := n.Marshal()
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("the rewrite does not parse: %v", err)
		}
		if string(again.Marshal()) != string(out) {
			t.Fatal("the rewrite is not stable")
		}
	})
}

func TestDisabledOverlay(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, data string
		want       []string
		ok         bool
	}{
		{"absent", `{"mcpServers": {}}`, nil, true},
		{"names", `{"disabledMcpServers": ["a", "b"]}`, []string{"a", "b"}, true},
		{"a number", `{"disabledMcpServers": [1]}`, nil, false},
		{"a null", `{"disabledMcpServers": [null]}`, nil, false},
		{"not an array", `{"disabledMcpServers": "a"}`, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, tt.name+".json")
			require.NoError(t, os.WriteFile(p, []byte(tt.data), 0o600))
			f, err := Load(ScopeLocal, p)
			require.NoError(t, err)
			got, ok := f.Disabled()
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
	p := filepath.Join(dir, "set.json")
	require.NoError(t, os.WriteFile(p, []byte(`{"disabledMcpServers": ["a"], "mcpServers": {}}`), 0o600))
	f, err := Load(ScopeLocal, p)
	require.NoError(t, err)
	f.SetDisabled([]string{"a", "b"})
	assert.Equal(t, "{\n  \"disabledMcpServers\": [\n    \"a\",\n    \"b\"\n  ],\n  \"mcpServers\": {}\n}\n", string(f.Bytes()), "in place")
	root, err := Parse([]byte(`{"b": 1, "a": 2}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "a"}, root.Keys())
	assert.Nil(t, (*Node)(nil).Keys())
}
