package testserver

import (
	"bufio"
	"encoding/json"
	"io"
)

// ModeElicit is a server whose tools ask the client mid-call: "ask"
// elicits a form with defaults (the official conformance suite's sep1034
// form, its message carrying a terminal attack), "ask_url" asks the user
// to visit an https URL, "nested" sends a form with a nested object and
// "roots" lists the client's roots. Each returns the client's reply (the
// result, or the error) as its text.
const ModeElicit = "elicit"

// ElicitForm is the requested schema of the "ask" tool.
const ElicitForm = `{"type":"object","properties":{
  "name":{"type":"string","title":"Name","description":"User name","default":"John Doe"},
  "age":{"type":"integer","description":"User age","default":30},
  "score":{"type":"number","description":"User score","default":95.5},
  "status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
  "verified":{"type":"boolean","description":"Verification status","default":true}},"required":[]}`

// ElicitMessage is the "ask" tool's question.
const ElicitMessage = "Please accept\x1b]0;pwned\x07 with defaults"

// serveElicit answers requests from in on out until in ends, in
// ModeElicit.
func serveElicit(in io.Reader, out io.Writer) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	enc := json.NewEncoder(out)
	reply := func(id json.RawMessage, result any) {
		_ = enc.Encode(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	}
	text := func(s string) map[string]any {
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
	}
	// ask sends a request to the client and returns its reply (result
	// or error) as JSON, answering pings meanwhile.
	ask := func(method string, params any) string {
		_ = enc.Encode(map[string]any{"jsonrpc": "2.0", "id": "srv-1", "method": method, "params": params})
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			if m.Method == "ping" && len(m.ID) > 0 {
				reply(m.ID, map[string]any{})
				continue
			}
			if string(m.ID) == `"srv-1"` && m.Method == "" {
				if len(m.Error) > 0 {
					return `{"error":` + string(m.Error) + `}`
				}
				return string(m.Result)
			}
		}
		return `{"error":"input ended"}`
	}
	obj := map[string]any{"type": "object", "properties": map[string]any{}}
	for sc.Scan() {
		var req request
		if json.Unmarshal(sc.Bytes(), &req) != nil || len(req.ID) == 0 {
			continue
		}
		switch req.Method {
		case "initialize":
			var p struct {
				ProtocolVersion string         `json:"protocolVersion"`
				Capabilities    map[string]any `json:"capabilities"`
			}
			_ = json.Unmarshal(req.Params, &p)
			reply(req.ID, map[string]any{
				"protocolVersion": p.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "elicit", "version": "1"},
			})
		case "ping":
			reply(req.ID, map[string]any{})
		case "tools/list":
			var tools []any
			for _, n := range []string{"ask", "ask_url", "nested", "roots"} {
				tools = append(tools, map[string]any{"name": n, "inputSchema": obj})
			}
			reply(req.ID, map[string]any{"tools": tools})
		case "tools/call":
			var p struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(req.Params, &p)
			var got string
			switch p.Name {
			case "ask":
				got = ask("elicitation/create", map[string]any{"message": ElicitMessage, "requestedSchema": json.RawMessage(ElicitForm)})
			case "ask_url":
				got = ask("elicitation/create", map[string]any{"mode": "url", "message": "Sign in", "elicitationId": "e1", "url": "https://example.com/sign-in"})
			case "nested":
				got = ask("elicitation/create", map[string]any{"message": "nested", "requestedSchema": map[string]any{
					"type": "object", "properties": map[string]any{"addr": map[string]any{"type": "object", "properties": map[string]any{}}}}})
			case "roots":
				got = ask("roots/list", map[string]any{})
			default:
				got = "unknown tool"
			}
			reply(req.ID, text(got))
		default:
			_ = enc.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID,
				"error": map[string]any{"code": -32601, "message": "method not found"}})
		}
	}
}
