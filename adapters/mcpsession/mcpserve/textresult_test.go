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
		{name: "meta", content: `[{"type":"text","text":"a","_meta":{}}]`, plain: true},
		{name: "meta with values", content: `[{"type":"text","text":"a","_meta":{"k":[1,"x",{"y":null}],"b":true}}]`, plain: true},
		{name: "a null meta", content: `[{"type":"text","text":"a","_meta":null}]`},
		{name: "an image", content: `[{"type":"image","data":"AA==","mimeType":"image/png"}]`, plain: true},
		{name: "an image of no data", content: `[{"type":"image","data":"","mimeType":"image/png"}]`, plain: true},
		{name: "an image without data", content: `[{"type":"image","mimeType":"image/png"}]`, plain: true},
		{name: "audio with meta", content: `[{"type":"audio","data":"UklGRg==","mimeType":"audio/wav","_meta":{"a":1}}]`, plain: true},
		{name: "base64 not canonical", content: `[{"type":"image","data":"AB==","mimeType":"image/png"}]`},
		{name: "base64 with a newline", content: `[{"type":"image","data":"AA\n==","mimeType":"image/png"}]`},
		{name: "base64 with an escape", content: `[{"type":"image","data":"A\u0041==","mimeType":"image/png"}]`},
		{name: "a resource link", content: `[{"type":"resource_link","uri":"file:///a","name":"a","title":"A","description":"d","mimeType":"text/plain","size":12,"_meta":{}}]`, plain: true},
		{name: "a resource link of size 0", content: `[{"type":"resource_link","uri":"file:///a","name":"a","size":0}]`, plain: true},
		{name: "a size with a fraction", content: `[{"type":"resource_link","uri":"file:///a","name":"a","size":1.0}]`},
		{name: "a size out of range", content: `[{"type":"resource_link","uri":"file:///a","name":"a","size":9223372036854775808}]`},
		{name: "icons", content: `[{"type":"resource_link","uri":"file:///a","name":"a","icons":[]}]`},
		{name: "an embedded text resource", content: `[{"type":"resource","resource":{"uri":"file:///a","mimeType":"text/plain","text":"hi","_meta":{"x":1}}}]`, plain: true},
		{name: "an embedded blob", content: `[{"type":"resource","resource":{"uri":"file:///b","blob":"AAEC"}},{"type":"text","text":"t"}]`, plain: true},
		{name: "an empty blob", content: `[{"type":"resource","resource":{"uri":"file:///b","blob":""}}]`},
		{name: "a resource of null", content: `[{"type":"resource","resource":null}]`},
		{name: "a resource member unknown", content: `[{"type":"resource","resource":{"uri":"u","size":1}}]`},
		{name: "a null string", content: `[{"type":"resource_link","uri":null,"name":"a"}]`},
		{name: "a member unknown", content: `[{"type":"image","data":"AA==","mimeType":"image/png","name":"x"}]`},
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
	for _, content := range []string{`[{"type":"text","text":"hi"}]`, `[{"type":"image","data":"AA==","mimeType":"image/png"}]`,
		`[{"type":"image","data":"AA==","mimeType":"image/png","annotations":{"priority":0.5}}]`, `[{"type":"nope"}]`} {
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
	f.Add(`[{"type":"image","data":"AA==","mimeType":"image/png","_meta":{"a":[1.5]}}]`, ``, false)
	f.Add(`[{"type":"audio","data":"","mimeType":""}]`, ``, true)
	f.Add(`[{"type":"resource_link","uri":"file:///a","name":"a","size":-3,"title":"t"}]`, `{}`, false)
	f.Add(`[{"type":"resource","resource":{"uri":"u","blob":"AAEC","mimeType":"x"},"_meta":{}}]`, ``, false)
	f.Add(`[{"type":"resource","resource":{"uri":"u","text":"\u00e9"}}]`, ``, false)
	f.Fuzz(func(t *testing.T, content, structured string, isError bool) {
		checkPlain(t, content, structured, isError)
	})
}

func portsResult(content string) ports.ToolResult {
	return ports.ToolResult{Content: json.RawMessage(content)}
}

// decodeText is plainText's decoding of content with encoding/json
// alone, as it was before scanText.
func decodeText(content []byte) ([]mcp.Content, bool) {
	var blocks []map[string]string
	if err := json.Unmarshal(content, &blocks); err != nil || blocks == nil {
		return nil, false
	}
	cs := []mcp.Content{}
	for _, b := range blocks {
		text, ok := b["text"]
		if len(b) != 2 || b["type"] != "text" || !ok {
			return nil, false
		}
		cs = append(cs, &mcp.TextContent{Text: text})
	}
	return cs, true
}

// FuzzScanText: whatever content holds, scanText takes it only when
// encoding/json decodes it to the same text blocks.
func FuzzScanText(f *testing.F) {
	for _, c := range []string{`[{"type":"text","text":"hi"}]`, ` [ { "text" : "a" , "type" : "text" } , {"type":"text","text":""} ] `,
		`[]`, `[ ]`, `null`, `[{"type":"text","text":"a","text":"b"}]`, `[{"type":"text"}]`, `[{"type":"image","text":"a"}]`,
		`[{"type":"text","text":"a\nb"}]`, `[{"type":"text","text":"é"}]`, "[{\"type\":\"text\",\"text\":\"\xff\"}]",
		`[{"type":"text","text":"a"},]`, `[{"type":"text","text":"a"}] x`, `[{"Type":"text","text":"a"}]`, `[{"type":"text","text":7}]`} {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, content string) {
		got, ok := scanText([]byte(content))
		if !ok {
			return
		}
		want, wok := decodeText([]byte(content))
		require.True(t, wok, "scanText took %q, which encoding/json does not decode to text blocks", content)
		require.Equal(t, want, got)
	})
}

func TestScanText(t *testing.T) {
	for c, take := range map[string]bool{`[{"type":"text","text":"hi"}]`: true, ` [ { "text" : "a" , "type" : "text" } , {"type":"text","text":""} ] `: true,
		`[]`: true, `null`: false, `[{"type":"text","text":"a","text":"b"}]`: false, `[{"type":"text","text":"a\nb"}]`: false,
		`[{"type":"text","text":"é"}]`: true, `[{"type":"text"}]`: false, `[{"type":"text","text":"a"}] x`: false} {
		_, ok := scanText([]byte(c))
		assert.Equal(t, take, ok, c)
	}
}
