package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// conformanceEntry is the official MCP conformance suite's CLI, pinned in
// peers/ (0.1.13, the newest release that runs on Node 20).
const conformanceEntry = "../../../peers/node_modules/@modelcontextprotocol/conformance/dist/index.js"

// conformanceClient is the client command the suite runs for a scenario:
// it gets the scenario's server URL as its argument and
// MCP_CONFORMANCE_SCENARIO, writes a user file naming that server, and runs
// the built CLI as a person would.
const conformanceClient = `#!/bin/sh
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/config/mcpward" "$dir/state" "$dir/ws"
printf '{"mcpServers": {"conf": {"type": "http", "url": "%s"}}}' "$1" > "$dir/config/mcpward/mcp.json"
cd "$dir/ws"
export XDG_CONFIG_HOME="$dir/config" XDG_STATE_HOME="$dir/state" HOME="$dir"
case "$MCP_CONFORMANCE_SCENARIO" in
  tools_call) exec "$MCPWARD_BIN" call conf add_numbers --args '{"a":5,"b":3}' ;;
  sse-retry)  exec "$MCPWARD_BIN" call conf test_reconnection ;;
  *)          exec "$MCPWARD_BIN" tools conf ;;
esac
`

// TestOfficialConformance runs the official MCP conformance suite's client
// scenarios against the built CLI. The scenarios mcpward passes must pass
// with no failed check; the ones it fails by design must keep failing, so
// a change of either is noticed:
//
//   - elicitation-sep1034-client-defaults: mcpward advertises no client
//     capability (no elicitation) and refuses the server's request;
//   - auth/metadata-default: the server asks for OAuth on first contact;
//     the CLI signs in only on "mcpward login", never while connecting
//     (and its OAuth client would refuse the suite's endpoints, which are
//     http on localhost, not https).
func TestOfficialConformance(t *testing.T) {
	node, err := exec.LookPath("node")
	entry, _ := filepath.Abs(conformanceEntry)
	if _, serr := os.Stat(entry); err != nil || serr != nil {
		if os.Getenv("MCPWARD_REQUIRE_PEERS") == "1" {
			t.Fatal("MCPWARD_REQUIRE_PEERS=1 but node or @modelcontextprotocol/conformance is missing (run: cd peers && npm ci)")
		}
		t.Skip("node or @modelcontextprotocol/conformance is missing (run: cd peers && npm ci)")
	}
	script := filepath.Join(t.TempDir(), "client.sh")
	require.NoError(t, os.WriteFile(script, []byte(conformanceClient), 0o700))
	passed := regexp.MustCompile(`Passed: (\d+)/(\d+), (\d+) failed`)

	for _, tt := range []struct {
		scenario string
		pass     bool
	}{
		{"initialize", true},
		{"tools_call", true},
		{"sse-retry", true},
		{"elicitation-sep1034-client-defaults", false},
		{"auth/metadata-default", false},
	} {
		t.Run(tt.scenario, func(t *testing.T) {
			cmd := exec.Command(node, entry, "client", "--command", script, "--scenario", tt.scenario, "--timeout", "30000")
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "MCPWARD_BIN="+binary, "NO_COLOR=1")
			out, err := cmd.CombinedOutput()
			text := string(out)
			m := passed.FindStringSubmatch(text)
			require.NotNil(t, m, "no result line:\n%s", text)
			if tt.pass {
				assert.NoError(t, err, "scenario failed:\n%s", text)
				assert.Equal(t, "0", m[3], "failed checks:\n%s", text)
				assert.Equal(t, m[1], m[2], "every check passed")
				assert.Contains(t, text, "OVERALL: PASSED")
				return
			}
			assert.Error(t, err, "expected to fail by design; if it passes now, update this test:\n%s", text)
			assert.NotEqual(t, "0", m[3])
			assert.False(t, strings.Contains(text, "OVERALL: PASSED"))
		})
	}
}
