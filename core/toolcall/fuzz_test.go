package toolcall_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpward/mcpward/core/toolcall"
	"github.com/mcpward/mcpward/ports"
)

// FuzzSchema: any input schema a server sends gives a JSON object with
// "type": "object" and an object "properties", and no top-level
// combinator.
func FuzzSchema(f *testing.F) {
	for _, s := range []string{`{"type":"object"}`, `{"oneOf":[{}],"properties":[]}`, `[]`, `null`, `{"properties":{"a":1},"required":"x"}`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		m := toolcall.Schema(ports.ToolSpec{InputSchema: schema})
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("the schema does not marshal: %v", err)
		}
		var back map[string]any
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("not a JSON object: %v", err)
		}
		if back["type"] != "object" {
			t.Fatalf("type %v", back["type"])
		}
		if _, ok := back["properties"].(map[string]any); !ok {
			t.Fatal("properties is not an object")
		}
		for _, k := range []string{"oneOf", "anyOf", "allOf", "not", "enum", "$schema"} {
			if _, ok := back[k]; ok {
				t.Fatalf("%s kept", k)
			}
		}
	})
}

// FuzzParts: any text and structured content give at least one part and
// never an empty text part.
func FuzzParts(f *testing.F) {
	f.Add("5", []byte(`{"sum":5}`), "image/png", true)
	f.Add("", []byte(`not json`), "", false)
	f.Fuzz(func(t *testing.T, text string, structured []byte, mime string, truncated bool) {
		res := ports.ToolResult{Blocks: []ports.ContentBlock{{Kind: ports.ContentText, Text: text},
			{Kind: ports.ContentImage, MIMEType: mime, Data: []byte{1}}, {Kind: ports.ContentResourceLink, URI: text, Name: mime}},
			StructuredContent: structured, Truncated: truncated}
		parts := toolcall.Parts(res, func(m string) bool { return m == "image/png" })
		if len(parts) == 0 {
			t.Fatal("no part")
		}
		for _, p := range parts {
			if p.Image == nil && p.Text == "" {
				t.Fatal("an empty text part")
			}
		}
	})
}
