package mcpserve

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// sdkResult is raw decoded by the SDK, as toResult did for every result
// before plainResult.
func sdkResult(raw []byte) (*mcp.CallToolResult, error) {
	var out mcp.CallToolResult
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// checkPlain fails when plainResult takes a result the SDK refuses, or
// returns one that marshals otherwise than the SDK's decoding.
func checkPlain(t *testing.T, content, structured string, isError bool) bool {
	raw, err := wireJSON(json.RawMessage(content), json.RawMessage(structured), isError)
	if err != nil {
		return false
	}
	got, ok := plainResult(json.RawMessage(content), json.RawMessage(structured), isError, raw)
	if !ok {
		return false
	}
	want, err := sdkResult(raw)
	if err != nil {
		t.Fatalf("plainResult took %q, which the SDK refuses: %v", raw, err)
	}
	g, gerr := json.Marshal(got)
	w, werr := json.Marshal(want)
	if gerr != nil || werr != nil || string(g) != string(w) {
		t.Fatalf("plainResult %q (%v), the SDK %q (%v)", g, gerr, w, werr)
	}
	return true
}

func TestPlainResult(t *testing.T) {
	for _, c := range []struct {
		name, content, structured string
		plain                     bool
	}{
		{name: "text", content: `[{"type":"text","text":"hi"},{"text":"x\u00e9\n","type":"text"}]`, plain: true},
		{name: "empty", content: `[]`, plain: true},
		{name: "structured", content: `[{"type":"text","text":"{}"}]`, structured: `{"b":[1,2.5,1e3,12345678901234567890],"a":{"c":null,"d":true}}`, plain: true},
		{name: "an empty text", content: `[{"type":"text","text":""}]`, plain: true},
		{name: "annotations", content: `[{"type":"text","text":"a","annotations":{"priority":1}}]`},
		{name: "meta", content: `[{"type":"text","text":"a","_meta":{}}]`},
		{name: "an image", content: `[{"type":"image","data":"AA==","mimeType":"image/png"}]`},
		{name: "a key in other case", content: `[{"type":"text","Text":"a"}]`},
		{name: "no text", content: `[{"type":"text"}]`},
		{name: "a null block", content: `[null]`},
		{name: "a lone surrogate", content: `[{"type":"text","text":"\ud800"}]`},
		{name: "invalid UTF-8", content: "[{\"type\":\"text\",\"text\":\"\xff\"}]"},
		{name: "too deep", content: `[{"type":"text","text":"a"}]`, structured: strings.Repeat("[", 1000) + strings.Repeat("]", 1000)},
		{name: "a number out of range", content: `[]`, structured: `{"a":1e400}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.plain, checkPlain(t, c.content, c.structured, false))
			assert.Equal(t, c.plain, checkPlain(t, c.content, c.structured, true))
		})
	}
}

// TestToResultTakesThePlainPath: a text result is what the SDK's decoding
// made; one with other blocks still goes through the SDK.
func TestToResultTakesThePlainPath(t *testing.T) {
	for _, content := range []string{`[{"type":"text","text":"hi"}]`, `[{"type":"image","data":"AA==","mimeType":"image/png"}]`, `[{"type":"nope"}]`} {
		raw, err := wireJSON(json.RawMessage(content), nil, false)
		require.NoError(t, err)
		want, err := sdkResult(raw)
		if err != nil {
			want = errorResult("mcpward: the server's result could not be forwarded (malformed_result)")
		}
		g, _ := json.Marshal(toResult(portsResult(content)))
		w, _ := json.Marshal(want)
		assert.Equal(t, string(w), string(g), content)
	}
}

// FuzzPlainResult: whatever a server's result holds, what plainResult
// returns marshals exactly as the SDK's decoding of it does.
func FuzzPlainResult(f *testing.F) {
	f.Add(`[{"type":"text","text":"hi"}]`, ``, false)
	f.Add(`[{"type":"text","text":"h\u00e9\"\\"}]`, `{"a":[1,-0,2e-7,{"b":"\u2028"}]}`, true)
	f.Add(`[{"text":"x","type":"text","text":"y"}]`, `null`, false)
	f.Add(`[{"type":"text","text":null}]`, `7`, false)
	f.Fuzz(func(t *testing.T, content, structured string, isError bool) {
		checkPlain(t, content, structured, isError)
	})
}

func portsResult(content string) ports.ToolResult {
	return ports.ToolResult{Content: json.RawMessage(content)}
}
