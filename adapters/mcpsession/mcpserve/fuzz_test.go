package mcpserve

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzRegisterTool: whatever a server's tool definition holds, registering
// it never panics; either it is served or left out and counted.
func FuzzRegisterTool(f *testing.F) {
	f.Add("t", `{"type":"object"}`, ``, ``)
	f.Add("t", `[]`, `7`, `"x"`)
	f.Add("a b", `{"type":"object","properties":{"x":{"$ref":"#/nope"}}}`, `{}`, `{"readOnlyHint":1}`)
	f.Add("t", `{"type":"object","x-mcp-header":{}}`, `null`, `null`)
	f.Fuzz(func(t *testing.T, name, in, out, ann string) {
		s := &Server{tools: map[string]string{}, prompts: map[string]string{}, resources: map[string]string{}}
		s.srv = mcp.NewServer(&mcp.Implementation{Name: "f", Version: "0"}, nil)
		s.log = discard
		tool := Tool{Name: name, InputSchema: json.RawMessage(in), OutputSchema: json.RawMessage(out), Annotations: json.RawMessage(ann)}
		s.syncTools([]Tool{tool})
		if len(s.tools)+s.skipped != 1 && name != "" && json.Valid([]byte(in)) {
			t.Fatalf("tool neither served nor counted")
		}
	})
}
