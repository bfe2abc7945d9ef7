package mcpserve

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/core/textsafe"
)

// FuzzRegisterTool: whatever a server's tool definition holds, registering
// it never panics; either it is served or left out and counted; what is
// served is offered under a name the text rule leaves as it is.
func FuzzRegisterTool(f *testing.F) {
	f.Add("t", `{"type":"object"}`, ``, ``)
	f.Add("t", `[]`, `7`, `"x"`)
	f.Add("a b", `{"type":"object","properties":{"x":{"$ref":"#/nope"}}}`, `{}`, `{"readOnlyHint":1}`)
	f.Add("t", `{"type":"object","x-mcp-header":{}}`, `null`, `null`)
	f.Add("t\x1b]52;c;eA==\x07", `{"type":"object","description":"\u202e\u0007"}`, `{"title":"\u200b"}`, `{"title":"\u009b"}`)
	f.Fuzz(func(t *testing.T, name, in, out, ann string) {
		s := &Server{tools: map[string]offered{}, prompts: map[string]offered{}, resources: map[string]string{},
			text: text{maxDesc: DefaultMaxDescription, maxTitle: DefaultMaxTitle}}
		s.srv = mcp.NewServer(&mcp.Implementation{Name: "f", Version: "0"}, nil)
		s.log = discard
		tool := Tool{Name: name, InputSchema: json.RawMessage(in), OutputSchema: json.RawMessage(out), Annotations: json.RawMessage(ann)}
		s.syncTools([]Tool{tool})
		if len(s.tools)+s.skipped != 1 && name != "" && json.Valid([]byte(in)) {
			t.Fatalf("tool neither served nor counted")
		}
		for _, o := range s.tools {
			if !textsafe.Safe(o.name, false) {
				t.Fatalf("offered under an unsafe name %q", o.name)
			}
		}
	})
}

// FuzzSchemaText: whatever a schema holds, the schema handed on is the
// same JSON value but for its "title" and "description" strings, each of
// which is safe under the rule and within its cap; a schema that is not
// JSON is handed back as it is.
func FuzzSchemaText(f *testing.F) {
	for _, s := range []string{`{"type":"object"}`, `{"description":"a\nb\u001b[2J","properties":{"x":{"title":"\u202eevil","description":"` + strings.Repeat("d", 9000) + `"}}}`,
		`{"properties":{"description":{"type":"string"},"title":{"enum":["\u0007"]}}}`, `[{"title":1}]`, `{"a":1e400}`, `nope`, `{"description":"\xff"}`} {
		f.Add(s)
	}
	x := text{maxDesc: 256, maxTitle: 64}
	f.Fuzz(func(t *testing.T, raw string) {
		got := x.schema(json.RawMessage(raw))
		if !json.Valid([]byte(raw)) {
			if string(got) != raw {
				t.Fatalf("not JSON, yet changed: %q", got)
			}
			return
		}
		dec := json.NewDecoder(bytes.NewReader(got))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			if string(got) == raw {
				return // a value Go cannot hold (a huge number): handed back as it is
			}
			t.Fatalf("the schema handed on is not JSON: %v", err)
		}
		var check func(v any)
		check = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, e := range v {
					if s, ok := e.(string); ok && (k == "title" || k == "description") {
						limit := x.maxTitle
						if k == "description" {
							limit = x.maxDesc
						}
						if !utf8.ValidString(s) || !textsafe.Safe(s, k == "description") || len(s) > limit {
							t.Fatalf("%s %q not under the rule", k, s)
						}
						continue
					}
					check(e)
				}
			case []any:
				for _, e := range v {
					check(e)
				}
			}
		}
		check(v)
	})
}
