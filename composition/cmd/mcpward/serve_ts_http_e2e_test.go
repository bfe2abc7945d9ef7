package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
)

// tsHTTPResult is what testdata/serve_ts_http_client.mjs prints.
type tsHTTPResult struct {
	Tools           []string
	Text            string
	IsError         bool
	ProtocolVersion string
	Error           string
}

// runTSHTTPClient runs the TypeScript SDK's client against url with token
// ("" none), calling tool with text; it returns what the script printed
// and whether it exited 0.
func runTSHTTPClient(t *testing.T, node, sdk, url, token, tool, text string) (tsHTTPResult, bool) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "serve_ts_http_client.mjs"))
	require.NoError(t, err)
	cmd := exec.Command(node, script)
	cmd.Env = []string{"PATH=" + filepath.Dir(node), "HOME=" + t.TempDir(), "MCP_SDK=" + sdk,
		"SERVE_URL=" + url, "SERVE_TOKEN=" + token, "TOOL=" + tool, "TEXT=" + text}
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		require.NoError(t, err)
	}
	var got tsHTTPResult
	require.NoError(t, json.Unmarshal(out, &got), "node printed %q", out)
	return got, err == nil
}

// TestServeTypeScriptClientHTTP: the TypeScript SDK's client (peers/)
// connects to "mcpward serve --http" and "mcpward serve ex --http" over
// Streamable HTTP with the bearer token, lists the tools and calls one;
// without the token it is refused, its error naming the token file.
func TestServeTypeScriptClientHTTP(t *testing.T) {
	node, entry := everythingCommand(t) // skips without node and peers
	sdk := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(entry))), "sdk")
	if _, err := os.Stat(filepath.Join(sdk, "package.json")); err != nil {
		t.Skip("@modelcontextprotocol/sdk is missing (run: cd peers && npm ci)")
	}
	w := serveWorld(t)
	for _, tc := range []struct {
		name string
		args []string
		tool string
	}{
		{"aggregate", []string{"serve"}, "mcp__ex__echo"},
		{"one server", []string{"serve", "ex"}, "echo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := "127.0.0.1:" + freePort(t)
			cmd := serveCmd(w, append(tc.args, "--http", addr)...)
			stderr := &iostreams.Buffer{}
			cmd.Stderr = stderr
			require.NoError(t, cmd.Start())
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "listening on") }, 30*time.Second, 20*time.Millisecond)
			tok, err := os.ReadFile(filepath.Join(w.root, "state", "mcpward", "serve-token"))
			require.NoError(t, err)
			url := "http://" + addr + "/mcp"

			got, ok := runTSHTTPClient(t, node, sdk, url, strings.TrimSpace(string(tok)), tc.tool, "from typescript over http")
			require.True(t, ok, "%+v; stderr: %s", got, stderr.String())
			assert.Contains(t, got.Tools, tc.tool)
			assert.Contains(t, got.Tools, "mcpward_status")
			if tc.tool == "echo" {
				assert.NotContains(t, got.Tools, "mcp__ex__echo", "serve NAME offers the server's own names")
			}
			assert.Equal(t, "from typescript over http", got.Text)
			assert.False(t, got.IsError)
			assert.NotEmpty(t, got.ProtocolVersion)

			got, ok = runTSHTTPClient(t, node, sdk, url, "", tc.tool, "x")
			assert.False(t, ok, "without the token: %+v", got)
			assert.Contains(t, strings.ToLower(got.Error), "unauthorized", got.Error)
			assert.Contains(t, got.Error, filepath.Join(w.root, "state", "mcpward", "serve-token"),
				"the TypeScript client's error says where the token is")
		})
	}
}
