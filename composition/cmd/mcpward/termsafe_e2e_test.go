package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/testserver"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
)

// hostileWorld defines the test binary as the user's stdio server
// "hostile", whose tool results, tool descriptions and server info carry
// terminal attacks.
func hostileWorld(t *testing.T) *world {
	exe, err := os.Executable()
	require.NoError(t, err)
	return newWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {"hostile": {"command": ` + jsonString(exe) +
			`, "env": {"` + testserver.Env + `": "` + testserver.ModeOK + `"}}}}`,
	})
}

// requireTerminalSafe fails when out holds a byte or rune that could drive
// or deceive a terminal (a plain "\n" aside).
func requireTerminalSafe(t *testing.T, out string) {
	t.Helper()
	for i := 0; i < len(out); i++ {
		require.False(t, out[i] < 0x20 && out[i] != '\n' || out[i] == 0x7f, "byte %#x in %q", out[i], out)
	}
	for _, r := range out {
		require.False(t, r != '\n' && termsafe.Unsafe(r), "rune %U in %q", r, out)
	}
}

// TestTerminalAttacks: a server's result carrying each terminal attack
// (OSC title and clipboard writes, a screen clear, a fake "mcpward:" line
// after CR/LF, a CR overwrite, bidi overrides and isolates, zero-width
// characters, a C1 CSI, a line separator) is shown escaped by the built
// CLI, never interpreted; --json keeps it exact, as JSON escapes.
func TestTerminalAttacks(t *testing.T) {
	w := hostileWorld(t)
	// One call returns every attack, one text item each, in AttackNames
	// order.
	r := w.run(t, "call", "hostile", "attack")
	require.Equal(t, 0, r.code, r.stderr)
	requireTerminalSafe(t, r.stdout+r.stderr)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	for i, l := range lines {
		assert.False(t, i > 0 && strings.HasPrefix(l, "mcpward"), "line %d passes for mcpward's own:\n%s", i, r.stdout)
	}
	var want []string
	for _, name := range testserver.AttackNames() {
		want = append(want, termsafe.Text(testserver.Attacks[name]))
	}
	assert.Equal(t, strings.Join(want, "\n"), strings.ReplaceAll(strings.TrimSuffix(r.stdout, "\n"), "\n  ", "\n"),
		"each attack shown escaped, nothing else changed")
	assert.Contains(t, r.stdout, "done\\r\n  mcpward: your session expired", "the fake line is indented, its CR shown")
	assert.Contains(t, r.stdout, `\x1b]52;c;`, "the clipboard write is shown, not sent")

	r = w.run(t, "call", "hostile", "attack", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	requireTerminalSafe(t, r.stdout)
	var got view.Call
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	var items []struct{ Text string }
	require.NoError(t, json.Unmarshal(got.Content, &items))
	require.Len(t, items, len(testserver.Attacks))
	for i, name := range testserver.AttackNames() {
		assert.Equal(t, testserver.Attacks[name], items[i].Text, "--json is exact: %s", name)
	}

	r = w.run(t, "tools", "hostile")
	require.Equal(t, 0, r.code, r.stderr)
	requireTerminalSafe(t, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, `Returns every attack.\x1b[2J\u202e`, "a description is shown escaped")
}
