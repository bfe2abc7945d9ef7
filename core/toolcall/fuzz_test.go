package toolcall_test

import (
	"bytes"
	"encoding/json"
	"strings"
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

// FuzzParts: any text and structured content give at least one part,
// never an empty text part, under every Structured mode; and the
// structured content is sent once: under StructuredFallback only when no
// content block gave a part, under StructuredOnly in place of the
// blocks.
func FuzzParts(f *testing.F) {
	f.Add("5", []byte(`{"sum":5}`), "image/png", true)
	f.Add("", []byte(`not json`), "", false)
	f.Add("", []byte(`{"sum":5}`), "", false)
	f.Add("{\"sum\": 5}", []byte(`{"sum":5}`), "image/tiff", false)
	f.Fuzz(func(t *testing.T, text string, structured []byte, mime string, truncated bool) {
		for _, blocks := range [][]ports.ContentBlock{
			{{Kind: ports.ContentText, Text: text}, {Kind: ports.ContentImage, MIMEType: mime, Data: []byte{1}},
				{Kind: ports.ContentResourceLink, URI: text, Name: mime}},
			{{Kind: ports.ContentText, Text: text}},
			{},
		} {
			res := ports.ToolResult{Blocks: blocks, StructuredContent: structured, Truncated: truncated}
			sc := strings.TrimSpace(string(structured))
			var b bytes.Buffer
			if json.Compact(&b, []byte(sc)) == nil {
				sc = b.String()
			}
			for _, mode := range []toolcall.Structured{toolcall.StructuredFallback, toolcall.StructuredAlso, toolcall.StructuredOnly} {
				parts := toolcall.Parts(res, func(m string) bool { return m == "image/png" }, mode)
				if len(parts) == 0 {
					t.Fatal("no part")
				}
				for _, p := range parts {
					if p.Image == nil && p.Text == "" {
						t.Fatal("an empty text part")
					}
				}
				noContent := toolcall.Parts(ports.ToolResult{Blocks: blocks}, func(m string) bool { return m == "image/png" }, mode)
				hadContent := !(len(noContent) == 1 && noContent[0].Text == "(no content)")
				switch {
				case sc == "":
				case mode == toolcall.StructuredFallback && hadContent:
					if len(parts) != len(noContent)+btoi(truncated) {
						t.Fatalf("structured content sent beside content: %d parts, %d without it", len(parts), len(noContent))
					}
				case mode == toolcall.StructuredOnly:
					if parts[0].Text != sc || len(parts) != 1+btoi(truncated) {
						t.Fatalf("structured only: %+v", parts)
					}
				}
			}
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
