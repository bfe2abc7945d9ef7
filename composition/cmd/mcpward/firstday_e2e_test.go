package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLegacySSEEndpointNamed: an HTTP+SSE endpoint of the 2024-11-05 era
// configured as "http" is named as such, with the status, and the user is
// told which URL to use (#25 item 7). The server is the shape an Express
// app of that era has: GET /sse opens the stream, POST /sse is 404.
func TestLegacySSEEndpointNamed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/sse" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: endpoint\ndata: /messages?sessionId=1\n\n")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "Cannot POST /sse")
	}))
	t.Cleanup(srv.Close)
	w := newWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {"old": {"type": "http", "url": ` + jsonString(srv.URL+"/sse") + `}}}`,
	})
	r := w.run(t, "tools")
	assert.Equal(t, 1, r.code, r.stderr)
	assert.Regexp(t, `(?m)^old: failed \(refused legacy_sse_endpoint\): 127\.0\.0\.1:\d+ \(HTTP 404\)$`, r.stdout)
	assert.Contains(t, r.stderr, "mcpward: hint: the URL is a legacy SSE endpoint, which mcpward does not speak: use the server's Streamable HTTP URL (often /mcp)\n")
	assert.NotContains(t, r.stderr, "retrying", "not retried: the same POST gets the same answer")

	r = w.run(t, "call", "old", "x", "--json")
	assert.Equal(t, 1, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"reason": "legacy_sse_endpoint"`)
	assert.Contains(t, r.stdout, `"status": 404`)
}

// quickstartBlock returns the lines of README's first ```sh block (the
// quickstart at its top), each as written.
func quickstartBlock(t *testing.T, readme string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "```sh\n")
	require.True(t, ok, "README has a ```sh block")
	block, _, ok := strings.Cut(rest, "```")
	require.True(t, ok, "the block ends")
	return strings.Split(strings.TrimRight(block, "\n"), "\n")
}

// TestReadmeQuickstart runs README's quickstart as written, line by line
// through sh, in a fresh git workspace with a fresh home (#25 item 4):
// the package it names must exist (it is the one pinned in peers/, found
// there offline: npm runs with --offline, and the workspace's
// node_modules is peers'), the approval step must be there, and the last
// line must reach a tool. "make install" is the one line not run: the
// binary this package's tests built from the same tree stands in for it,
// on PATH as "mcpward".
func TestReadmeQuickstart(t *testing.T) {
	everythingCommand(t) // the peer is installed (else skip, or fail under MCPWARD_REQUIRE_PEERS=1)
	npx, err := exec.LookPath("npx")
	require.NoError(t, err, "the quickstart needs npx")
	readme, err := os.ReadFile("../../../README.md")
	require.NoError(t, err)
	lines := quickstartBlock(t, string(readme))
	require.NotEmpty(t, lines)
	require.True(t, strings.HasPrefix(lines[0], "make install "), "the quickstart starts by installing the CLI: %q", lines[0])

	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	bin := filepath.Join(root, "bin")
	for _, d := range []string{ws, bin, filepath.Join(root, "home"), filepath.Join(root, "tmp")} {
		require.NoError(t, os.MkdirAll(d, 0o700))
	}
	git := exec.Command("git", "init", "-q", ws)
	git.Env = []string{"HOME=" + filepath.Join(root, "home"), "PATH=/usr/bin:/bin"}
	out, err := git.CombinedOutput()
	require.NoError(t, err, "%s", out)
	peers, err := filepath.Abs("../../../peers/node_modules")
	require.NoError(t, err)
	require.NoError(t, os.Symlink(peers, filepath.Join(ws, "node_modules")))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "package.json"), []byte(`{"private": true}`+"\n"), 0o600))
	require.NoError(t, os.Symlink(binary, filepath.Join(bin, "mcpward")))

	env := []string{
		"PATH=" + bin + ":" + filepath.Dir(npx) + ":/usr/bin:/bin",
		"HOME=" + filepath.Join(root, "home"),
		"XDG_CONFIG_HOME=" + filepath.Join(root, "config"),
		"XDG_STATE_HOME=" + filepath.Join(root, "state"),
		"TMPDIR=" + filepath.Join(root, "tmp"),
		"DBUS_SESSION_BUS_ADDRESS=disabled:",
		"npm_config_offline=true",
		"npm_config_update_notifier=false",
		"npm_config_cache=" + filepath.Join(root, "npm-cache"),
	}
	var last result
	for _, line := range lines[1:] {
		cmd := exec.Command("/bin/sh", "-c", line)
		cmd.Dir = ws
		cmd.Env = env
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		last = result{stdout: o.String(), stderr: e.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			last.code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		t.Logf("$ %s\n%s%s", line, last.stdout, last.stderr)
		require.Equal(t, 0, last.code, "README's quickstart line %q failed:\n%s%s", line, last.stdout, last.stderr)
	}
	assert.Contains(t, last.stdout, "hello", "the quickstart ends with a tool's answer")
}

// TestReadOnlyCommandsWriteNoAudit: list, show, get, doctor and the shell
// completion only show the configuration: they append no audit record
// (#25 item 8); approve (a grant), tools and call (a connection, decided
// again) do.
func TestReadOnlyCommandsWriteNoAudit(t *testing.T) {
	bin := exampleBinary(t)
	w := newWorld(t, map[string]string{
		"ws/.mcp.json":   `{"mcpServers": {"example": {"command": ` + jsonString(bin) + `}}}`,
		"ws/.git/config": gitConfig,
	})
	auditFile := filepath.Join(w.root, "state", "mcpward", "store", "audit.jsonl")
	size := func() int64 {
		fi, err := os.Stat(auditFile)
		if os.IsNotExist(err) {
			return 0
		}
		require.NoError(t, err)
		return fi.Size()
	}
	require.Equal(t, 0, w.run(t, "approve", "example").code)
	granted := size()
	require.Positive(t, granted, "a grant is recorded")
	for _, args := range [][]string{
		{"list"}, {"list", "--json"}, {"show", "example"}, {"get", "example"}, {"doctor"}, {"doctor", "--json"},
		{"__complete", "call", ""}, {"__complete", "show", "ex"},
	} {
		r := w.run(t, args...)
		assert.NotContains(t, r.stderr, "panic", args)
		assert.Equal(t, granted, size(), "%v appended to the audit log", args)
	}
	r := w.run(t, "call", "example", "echo", "--args", `{"text":"x"}`)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Greater(t, size(), granted, "a connection's decision is recorded")
}

// TestCallArgForms: --arg KEY=VALUE typed by the tool's schema, --args
// @FILE and --args - (#25 item 8), against the example server.
func TestCallArgForms(t *testing.T) {
	bin := exampleBinary(t)
	w := newWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {"example": {"command": ` + jsonString(bin) + `}}}`,
		"args.json":               `{"text":"from a file"}`,
	})
	r := w.run(t, "call", "example", "add", "--arg", "a=2", "--arg", "b=3.5", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"sum": 5.5`, "numbers, as the schema types a and b")
	r = w.run(t, "call", "example", "echo", "--arg", "text=42")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "42\n", r.stdout, "a string, as the schema types text")
	r = w.run(t, "call", "example", "add", "--arg", "a=two", "--arg", "b=1")
	assert.Equal(t, 2, r.code, r.stderr)
	assert.Contains(t, r.stderr, `--arg "a": the tool's schema expects number`)
	r = w.run(t, "call", "example", "echo", "--args", "@$ROOT/args.json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "from a file\n", r.stdout)

	// One tool's parameters in words (#25 item 8).
	r = w.run(t, "tools", "example/add")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "example/add (mcp__example__add)\n")
	assert.Regexp(t, `(?m)^    a\s+number\s+required`, r.stdout)
	r = w.run(t, "tools", "example/add", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"required": true`)
	r = w.run(t, "tools", "example/nope")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "unknown_tool")

	cmd := exec.Command(binary, "call", "example", "echo", "--args", "-")
	cmd.Dir, cmd.Env = w.ws, w.env
	cmd.Stdin = strings.NewReader(`{"text":"from stdin"}`)
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, "from stdin\n", string(out))
}
