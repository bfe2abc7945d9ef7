package mcpserve

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// wireResult is the JSON of a CallToolResult, as toResult made it with
// json.Marshal before wireJSON.
type wireResult struct {
	Content           json.RawMessage `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

// TestWireJSONIsWhatMarshalMade: the joined result is, value for value,
// what json.Marshal of a wireResult made, and a part that is not one
// JSON value (one that would smuggle other members in) is refused.
func TestWireJSONIsWhatMarshalMade(t *testing.T) {
	for _, c := range []struct {
		name                string
		content, structured string
		isError             bool
	}{
		{"text", `[{"type":"text","text":"hi"}]`, "", false},
		{"error", `[{"type":"text","text":"no"}]`, "", true},
		{"structured", `[]`, `{"a": [1, 2, {"b": null}]}`, false},
		{"spaces", " [ {\"type\" : \"text\", \"text\":\"x\"} ] ", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var sc json.RawMessage
			if c.structured != "" {
				sc = json.RawMessage(c.structured)
			}
			got, err := wireJSON(json.RawMessage(c.content), sc, c.isError)
			require.NoError(t, err)
			want, err := json.Marshal(wireResult{Content: json.RawMessage(c.content), StructuredContent: sc, IsError: c.isError})
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(got))
		})
	}
	for _, bad := range []struct{ content, structured string }{
		{`[],"isError":true`, ""},
		{`[]`, `{},"isError":true`},
		{`[`, ""},
		{``, ""},
	} {
		_, err := wireJSON(json.RawMessage(bad.content), json.RawMessage(bad.structured), false)
		assert.ErrorIs(t, err, errMalformedResult, "%q %q", bad.content, bad.structured)
	}
}

// FuzzToResult: whatever content and structured content a server's
// result holds, toResult never panics, and the JSON it decodes is the
// one json.Marshal of a wireResult made, or the parts are refused where
// json.Marshal refused them.
func FuzzToResult(f *testing.F) {
	f.Add(`[{"type":"text","text":"hi"}]`, ``, false)
	f.Add(`[{"type":"image","data":"AA==","mimeType":"image/png"}]`, `{"a":1}`, true)
	f.Add(`[],"isError":true`, `{}`, false)
	f.Add(`null`, `null`, false)
	f.Fuzz(func(t *testing.T, content, structured string, isError bool) {
		_ = toResult(ports.ToolResult{Content: json.RawMessage(content), StructuredContent: json.RawMessage(structured), IsError: isError})
		got, err := wireJSON(json.RawMessage(content), json.RawMessage(structured), isError)
		want, merr := json.Marshal(wireResult{Content: json.RawMessage(content), StructuredContent: json.RawMessage(structured), IsError: isError})
		if (err == nil) != (merr == nil) {
			t.Fatalf("wireJSON error %v, json.Marshal error %v", err, merr)
		}
		if err == nil {
			var g, w any
			if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil || !reflect.DeepEqual(g, w) {
				t.Fatalf("wireJSON %q, json.Marshal %q", got, want)
			}
		}
	})
}
