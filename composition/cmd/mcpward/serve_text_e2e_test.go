package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/core/textsafe"
)

// What serve hands its clients (adapters/mcpsession/mcpserve, which the
// CLI does not import): its caps and its notice of a cut result.
const (
	serveMaxDescription = 8 << 10
	serveMaxTitle       = 512
	serveTruncatedMeta  = "mcpward/truncated"
	serveTruncatedNote  = "[mcpward: this result was cut to its admission cap; the rest was not sent]"
)

// TestServeHostileText is issue 22's attack 8 through "mcpward serve": the
// hostile server (control-chars, with a 200 KB description) puts CSI, OSC
// title and OSC 52 clipboard sequences, CR LF, C1, bidi and zero-width
// characters in every name, title, description and schema description. A
// go-sdk client of serve lists every such string under the one rule
// (escaped, newlines kept in descriptions), the long description cut to
// 8 KiB with a visible marker. A result is forwarded as the server sent it,
// and one cut by the admission cap ends in a notice and carries
// "mcpward/truncated" in _meta.
func TestServeHostileText(t *testing.T) {
	h := hostileServerWorld(t, "control-chars", []string{"-description-bytes", "204800"}, "")
	stderr := &iostreams.Buffer{}
	cs, _, _ := connectStdio(t, h.world, stderr)
	waitTool(t, cs, "mcp__h__long_description")

	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	raw, err := json.Marshal(res)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(raw, &v))
	strs := 0
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				require.True(t, textsafe.Safe(k, false), "a key %q", k)
				walk(k, e)
			}
		case []any:
			for _, e := range v {
				walk(key, e)
			}
		case string:
			strs++
			require.True(t, textsafe.Safe(v, key == "description"), "%s %q", key, v)
			limit := serveMaxTitle
			if key == "description" {
				limit = serveMaxDescription
			}
			require.LessOrEqual(t, len(v), limit, key)
		}
	}
	walk("", v)
	assert.Greater(t, strs, 20)
	var long, echo *mcp.Tool
	for _, tl := range res.Tools {
		switch tl.Name {
		case "mcp__h__long_description":
			long = tl
		case "mcp__h__echo":
			echo = tl
		}
	}
	require.NotNil(t, long)
	require.NotNil(t, echo)
	assert.Len(t, long.Description, serveMaxDescription)
	assert.True(t, strings.HasSuffix(long.Description, "…[cut by mcpward: 204800 bytes in all]"), "the marker says how long it was: %q", long.Description[len(long.Description)-60:])
	assert.Contains(t, echo.Description, `\x1b]52;c;`, "OSC 52 shown, not sent")
	assert.Contains(t, echo.Description, `\u202eexe.txt\u2066`)
	assert.Contains(t, echo.Description, `zero\u200dwidth`)
	assert.Contains(t, echo.Description, `\u009b31m`)
	assert.Contains(t, echo.Description, `\r`+"\n"+`mcpward: error`, "the newline kept, the carriage return shown")

	// A result passes as the server sent it; cut by the admission cap
	// (100,000 characters), it says so.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__h__echo", Arguments: map[string]any{"text": strings.Repeat("a", 150_000)}})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(r.Content), 2)
	first := r.Content[0].(*mcp.TextContent).Text
	assert.True(t, strings.HasPrefix(first, "\x1b[2J"), "result content is forwarded as the server sent it")
	assert.Equal(t, serveTruncatedNote, r.Content[len(r.Content)-1].(*mcp.TextContent).Text)
	assert.Equal(t, true, r.Meta[serveTruncatedMeta])
	r = call(t, cs, "mcp__h__echo", map[string]any{"text": "short"})
	assert.NotContains(t, r.Meta, serveTruncatedMeta)
	assert.NotEqual(t, serveTruncatedNote, r.Content[len(r.Content)-1].(*mcp.TextContent).Text)
}
