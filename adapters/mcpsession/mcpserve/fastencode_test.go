package mcpserve

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/mcpsession/internal/sdkjson"
)

// checkEncodeText fails when encodeText takes res and writes other bytes
// than the SDK's encoding of it (sdkjson.Marshal, or marshalModern for a
// modern session) and returns whether it took it.
func checkEncodeText(t *testing.T, s *Server, res *mcp.CallToolResult, modern bool) bool {
	t.Helper()
	got, ok := s.encodeText(res, modern)
	var want []byte
	var err error
	if modern {
		want, err = s.marshalModern(res)
	} else {
		want, err = sdkjson.Marshal(res)
	}
	require.NoError(t, err)
	if ok {
		require.Equal(t, string(want), string(got))
	}
	return ok
}

func TestEncodeText(t *testing.T) {
	texts := func(ss ...string) []mcp.Content {
		out := []mcp.Content{}
		for _, s := range ss {
			out = append(out, &mcp.TextContent{Text: s})
		}
		return out
	}
	for _, impl := range []*mcp.Implementation{{Name: "mcpward", Version: "dev"}, {Name: `a "<b>" & \ c` + "\u2028", Version: "é"}} {
		s := New(newFake(Catalog{}), &Options{Name: impl.Name, Version: impl.Version})
		for _, c := range []struct {
			name string
			res  *mcp.CallToolResult
			take bool
		}{
			{"one text", &mcp.CallToolResult{Content: texts("echo benchmark")}, true},
			{"two texts", &mcp.CallToolResult{Content: texts("a", "é b ✓")}, true},
			{"no content", &mcp.CallToolResult{Content: texts()}, true},
			{"nil content", &mcp.CallToolResult{}, false},
			{"an empty text", &mcp.CallToolResult{Content: texts("")}, true},
			{"an error", &mcp.CallToolResult{Content: texts("boom"), IsError: true}, true},
			{"html", &mcp.CallToolResult{Content: texts("a<b")}, true},
			{"a quote", &mcp.CallToolResult{Content: texts(`a"b`)}, true},
			{"a newline", &mcp.CallToolResult{Content: texts("a\nb")}, true},
			{"del", &mcp.CallToolResult{Content: texts("a\x7fb")}, true},
			{"line separator", &mcp.CallToolResult{Content: texts("a\u2028b")}, true},
			{"invalid UTF-8", &mcp.CallToolResult{Content: texts("a\xffb")}, true},
			{"meta", &mcp.CallToolResult{Content: texts("a"), Meta: mcp.Meta{"k": 1}}, false},
			{"block meta", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a", Meta: mcp.Meta{"k": 1}}}}, false},
			{"annotations", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a", Annotations: &mcp.Annotations{Priority: 1}}}}, false},
			{"an image", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"}}}, false},
			{"structured", &mcp.CallToolResult{Content: texts("a"), StructuredContent: map[string]any{"a": 1}}, false},
			{"state", &mcp.CallToolResult{RequestState: "s", InputRequests: mcp.InputRequestMap{}}, false},
		} {
			t.Run(c.name, func(t *testing.T) {
				assert.Equal(t, c.take, checkEncodeText(t, s, c.res, false), "legacy")
				assert.Equal(t, c.take, checkEncodeText(t, s, c.res, true), "modern")
			})
		}
	}
}

// FuzzEncodeText: whatever the texts of a result (and the server's
// name), encodeText writes the SDK's bytes or declines.
func FuzzEncodeText(f *testing.F) {
	f.Add("mcpward", "echo benchmark", "", uint8(1), false)
	f.Add("x<y>", "é ✓ \u2029", "a&b", uint8(2), true)
	f.Add("n", "a\x00b", "\"", uint8(3), false)
	f.Add("n", "\xed\xa0\x80", "\xff", uint8(2), true)
	f.Fuzz(func(t *testing.T, name, a, b string, n uint8, isError bool) {
		s := New(newFake(Catalog{}), &Options{Name: name, Version: "1"})
		res := &mcp.CallToolResult{IsError: isError, Content: []mcp.Content{}}
		if n >= 128 {
			res.Content = nil
		}
		for i := range int(n % 4) {
			res.Content = append(res.Content, &mcp.TextContent{Text: []string{a, b}[i%2]})
		}
		took := checkEncodeText(t, s, res, false)
		assert.Equal(t, took, checkEncodeText(t, s, res, true))
		if took && !strings.ContainsAny(a+b, "<>&\"\\") {
			var back mcp.CallToolResult
			raw, _ := s.encodeText(res, false)
			require.NoError(t, json.Unmarshal(raw, &back))
		}
	})
}
