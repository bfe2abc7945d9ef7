package testserver

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ModeContent serves, besides the tools, hostile prompts and resources: a
// prompt with 10,000 arguments, a prompt and a resource whose text holds
// terminal attacks, a resource of ContentBigBytes bytes, and a template
// whose reserved expansion can leave its origin.
const ModeContent = "content"

// ContentBigBytes is the size of the big resource (over the CLI's read
// cap); ContentHugeBytes that of the huge one (over the stdio receive cap,
// as a resource of 1 GB would be).
const (
	ContentBigBytes  = 3 << 20
	ContentHugeBytes = 17 << 20
)

// capabilities are the capabilities initialize declares in mode.
func capabilities(mode string) map[string]any {
	caps := map[string]any{"tools": map[string]any{}}
	if mode == ModeContent {
		caps["prompts"] = map[string]any{}
		caps["resources"] = map[string]any{}
	}
	return caps
}

// content answers the prompt and resource methods in ModeContent.
func content(mode, method string, params json.RawMessage) (any, bool) {
	if mode != ModeContent {
		return nil, false
	}
	text := func(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
	switch method {
	case "prompts/list":
		many := make([]any, 10_000)
		for i := range many {
			many[i] = map[string]any{"name": fmt.Sprintf("a%d", i)}
		}
		return map[string]any{"prompts": []any{
			map[string]any{"name": "greet", "description": "Greets.\x1b[2J", "arguments": []any{
				map[string]any{"name": "who", "description": "whom", "required": true},
			}},
			map[string]any{"name": "huge", "arguments": many},
		}}, true
	case "prompts/get":
		var p struct {
			Arguments map[string]string `json:"arguments"`
		}
		_ = json.Unmarshal(params, &p)
		return map[string]any{"messages": []any{
			map[string]any{"role": "user", "content": text("hello " + p.Arguments["who"] + Attacks["fake_line"])},
		}}, true
	case "resources/list":
		return map[string]any{"resources": []any{
			map[string]any{"uri": "test://small", "name": "small", "mimeType": "text/plain"},
			map[string]any{"uri": "test://big", "name": "big", "mimeType": "text/plain"},
		}}, true
	case "resources/templates/list":
		return map[string]any{"resourceTemplates": []any{
			map[string]any{"uriTemplate": "test://files/{+path}", "name": "files"},
			map[string]any{"uriTemplate": "test://host{+path}", "name": "leaky"},
		}}, true
	case "resources/read":
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(params, &p)
		body := "small body" + Attacks["osc_title"]
		switch p.URI {
		case "test://big":
			body = strings.Repeat("x", ContentBigBytes)
		case "test://huge":
			body = strings.Repeat("x", ContentHugeBytes)
		}
		return map[string]any{"contents": []any{map[string]any{"uri": p.URI, "mimeType": "text/plain", "text": body}}}, true
	}
	return nil, false
}
