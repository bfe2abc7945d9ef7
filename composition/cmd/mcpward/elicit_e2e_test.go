package main

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/testserver"
)

// TestCLIElicitation runs the binary against a stdio server that elicits
// mid-call: --elicitation=defaults answers its form with the form's
// defaults, --elicitation=decline declines, and without the flag (no
// terminal) nothing is declared and the server's question is refused.
func TestCLIElicitation(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	w := newWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {"asker": {"command": ` + jsonString(exe) +
			`, "env": {"` + testserver.Env + `": "` + testserver.ModeElicit + `"}}}}`,
	})
	answer := func(args ...string) map[string]any {
		t.Helper()
		r := w.run(t, append([]string{"call", "asker", "ask", "--json"}, args...)...)
		require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
		var out struct{ Content []struct{ Text string } }
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
		require.Len(t, out.Content, 1)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(out.Content[0].Text), &got))
		return got
	}
	assert.Equal(t, map[string]any{"action": "accept", "content": map[string]any{
		"name": "John Doe", "age": 30.0, "score": 95.5, "status": "active", "verified": true}}, answer("--elicitation=defaults"))
	assert.Equal(t, map[string]any{"action": "decline"}, answer("--elicitation=decline"))
	refused := answer()
	require.Contains(t, refused, "error")
	assert.Equal(t, -32601.0, refused["error"].(map[string]any)["code"], "no elicitation declared off a terminal")
}
