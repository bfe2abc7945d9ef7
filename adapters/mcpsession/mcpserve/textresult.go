package mcpserve

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkMaxDepth is the nesting the SDK's decoder accepts in one value.
const sdkMaxDepth = 1000

// plainResult decodes raw (wireJSON's joined result) as the SDK's
// json.Unmarshal into a CallToolResult would, without the SDK's decoder
// (a fresh one, with a 32 KiB buffer, per value), for the common result:
// content blocks that are all {"type":"text","text":...} with no other
// member. ok is false for anything else, and for what the two decoders
// might read differently (invalid UTF-8, an escaped surrogate, nesting
// past the SDK's limit, a number the standard library refuses): the
// caller then decodes with the SDK. FuzzPlainResult checks that what it
// returns marshals as the SDK's decoding does.
func plainResult(content, structured json.RawMessage, isError bool, raw []byte) (*mcp.CallToolResult, bool) {
	if !utf8.Valid(raw) || surrogateEscape(raw) || tooDeep(raw) {
		return nil, false
	}
	var blocks []map[string]string
	if err := json.Unmarshal(content, &blocks); err != nil || blocks == nil {
		return nil, false
	}
	out := &mcp.CallToolResult{Content: make([]mcp.Content, 0, len(blocks)), IsError: isError}
	for _, b := range blocks {
		text, ok := b["text"]
		if len(b) != 2 || b["type"] != "text" || !ok {
			return nil, false
		}
		out.Content = append(out.Content, &mcp.TextContent{Text: text})
	}
	if len(structured) > 0 {
		if err := json.Unmarshal(structured, &out.StructuredContent); err != nil {
			return nil, false
		}
	}
	return out, true
}

// surrogateEscape reports whether b may hold a \u escape of a UTF-16
// surrogate (a lone one decodes differently from one decoder to another).
func surrogateEscape(b []byte) bool {
	for {
		i := bytes.Index(b, []byte(`\u`))
		if i < 0 || i+2 >= len(b) {
			return false
		}
		if c := b[i+2]; c == 'd' || c == 'D' {
			return true
		}
		b = b[i+2:]
	}
}

// tooDeep reports whether b nests deeper than the SDK's decoder accepts,
// counted as the SDK counts.
func tooDeep(b []byte) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > sdkMaxDepth {
				return true
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return false
}
