package mcpserve

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/adapters/mcpsession/internal/sdkjson"
	"github.com/mcpward/mcpward/core/jsontext"
)

// plainResult decodes raw (wireJSON's joined result) as the SDK's
// json.Unmarshal into a CallToolResult would, without the SDK's decoder
// (a fresh one, with a 32 KiB buffer, per value), for the results servers
// send: content blocks of the five kinds a tool result may hold, each
// with exactly the members plainBlock knows (text; image and audio;
// resource_link; an embedded resource; each with its _meta), and any
// structured content. ok is false for anything else (annotations, icons,
// a member of another case, a member it does not know) and for what the
// two decoders might read differently (invalid UTF-8, an escaped
// surrogate, nesting past the SDK's limit, a number the standard library
// refuses, a null where a string goes, base64 that is not canonical): the
// caller then decodes with the SDK. FuzzPlainResult checks that what it
// returns marshals as the SDK's decoding does.
func plainResult(content, structured json.RawMessage, isError bool, raw []byte) (*mcp.CallToolResult, bool) {
	if !utf8.Valid(raw) || surrogateEscape(raw) || sdkjson.TooDeep(raw) {
		return nil, false
	}
	out := &mcp.CallToolResult{IsError: isError}
	if !plainText(content, out) {
		var blocks []map[string]json.RawMessage
		if err := json.Unmarshal(content, &blocks); err != nil || blocks == nil {
			return nil, false
		}
		out.Content = make([]mcp.Content, 0, len(blocks))
		for _, b := range blocks {
			c, ok := plainBlock(b)
			if !ok {
				return nil, false
			}
			out.Content = append(out.Content, c)
		}
	}
	if len(structured) > 0 {
		if err := json.Unmarshal(structured, &out.StructuredContent); err != nil {
			return nil, false
		}
	}
	return out, true
}

// plainText sets out.Content from content when every block is
// {"type":"text","text":...} with no other member (the common result,
// decoded the cheapest way) and reports whether it did.
func plainText(content json.RawMessage, out *mcp.CallToolResult) bool {
	if cs, ok := scanText(content); ok {
		out.Content = cs
		return true
	}
	var blocks []map[string]string
	if err := json.Unmarshal(content, &blocks); err != nil || blocks == nil {
		return false
	}
	cs := make([]mcp.Content, 0, len(blocks))
	for _, b := range blocks {
		text, ok := b["text"]
		if len(b) != 2 || b["type"] != "text" || !ok {
			return false
		}
		cs = append(cs, &mcp.TextContent{Text: text})
	}
	out.Content = cs
	return true
}

// scanText is plainText's common case read without a decoder: content is
// a JSON array of objects of exactly the members "type" (the string
// "text") and "text", each once in either order, whose keys and values
// hold no escape, no control character and only valid UTF-8 (so each
// string is its bytes, as encoding/json decodes it). ok is false for
// anything else, which plainText then decodes.
func scanText(content []byte) ([]mcp.Content, bool) {
	p := jsontext.SkipSpace(content, 0)
	if p >= len(content) || content[p] != '[' {
		return nil, false
	}
	cs := []mcp.Content{}
	p = jsontext.SkipSpace(content, p+1)
	if p < len(content) && content[p] == ']' {
		return cs, jsontext.SkipSpace(content, p+1) == len(content)
	}
	for {
		if p >= len(content) || content[p] != '{' {
			return nil, false
		}
		var text string
		var haveType, haveText bool
		p = jsontext.SkipSpace(content, p+1)
		for i := range 2 {
			if i == 1 { // a ',' between the two members
				if p >= len(content) || content[p] != ',' {
					return nil, false
				}
				p = jsontext.SkipSpace(content, p+1)
			}
			key, e, ok := scanPlainString(content, p)
			if !ok {
				return nil, false
			}
			p = jsontext.SkipSpace(content, e)
			if p >= len(content) || content[p] != ':' {
				return nil, false
			}
			v, e, ok := scanPlainString(content, jsontext.SkipSpace(content, p+1))
			if !ok {
				return nil, false
			}
			switch {
			case string(key) == "type" && !haveType && string(v) == "text":
				haveType = true
			case string(key) == "text" && !haveText:
				text, haveText = string(v), true
			default:
				return nil, false
			}
			p = jsontext.SkipSpace(content, e)
		}
		if p >= len(content) || content[p] != '}' {
			return nil, false
		}
		cs = append(cs, &mcp.TextContent{Text: text})
		p = jsontext.SkipSpace(content, p+1)
		if p >= len(content) {
			return nil, false
		}
		switch content[p] {
		case ',':
			p = jsontext.SkipSpace(content, p+1)
		case ']':
			return cs, jsontext.SkipSpace(content, p+1) == len(content)
		default:
			return nil, false
		}
	}
}

// scanPlainString returns the bytes of the JSON string at b[p] and the
// index past it, when it holds no escape, no control character and only
// valid UTF-8; ok is false otherwise.
func scanPlainString(b []byte, p int) (s []byte, end int, ok bool) {
	if p >= len(b) || b[p] != '"' {
		return nil, 0, false
	}
	for i := p + 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			s = b[p+1 : i]
			return s, i + 1, utf8.Valid(s)
		case c == '\\' || c < 0x20:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// blockMembers are the members plainBlock takes of each kind of block.
var blockMembers = map[string][]string{
	"text":          {"type", "text", "_meta"},
	"image":         {"type", "data", "mimeType", "_meta"},
	"audio":         {"type", "data", "mimeType", "_meta"},
	"resource_link": {"type", "uri", "name", "title", "description", "mimeType", "size", "_meta"},
	"resource":      {"type", "resource", "_meta"},
}

// resourceMembers are the members plainBlock takes of an embedded
// resource's contents.
var resourceMembers = []string{"uri", "mimeType", "text", "blob", "_meta"}

// plainBlock is the SDK's content of block b, when b is a block of a kind
// in blockMembers with only the members listed there, each of the form the
// SDK reads the same way as the standard library does.
func plainBlock(b map[string]json.RawMessage) (mcp.Content, bool) {
	typ, ok := plainString(b, "type")
	if !ok || !onlyMembers(b, blockMembers[typ]) {
		return nil, false
	}
	meta, ok := plainMeta(b)
	if !ok {
		return nil, false
	}
	switch typ {
	case "text":
		text, ok := plainString(b, "text")
		if _, present := b["text"]; !ok || !present {
			return nil, false
		}
		return &mcp.TextContent{Text: text, Meta: meta}, true
	case "image", "audio":
		data, ok1 := plainBytes(b, "data", true)
		mime, ok2 := plainString(b, "mimeType")
		if !ok1 || !ok2 {
			return nil, false
		}
		if typ == "image" {
			return &mcp.ImageContent{Data: data, MIMEType: mime, Meta: meta}, true
		}
		return &mcp.AudioContent{Data: data, MIMEType: mime, Meta: meta}, true
	case "resource_link":
		l := &mcp.ResourceLink{Meta: meta}
		for _, f := range []struct {
			name string
			to   *string
		}{{"uri", &l.URI}, {"name", &l.Name}, {"title", &l.Title}, {"description", &l.Description}, {"mimeType", &l.MIMEType}} {
			v, ok := plainString(b, f.name)
			if !ok {
				return nil, false
			}
			*f.to = v
		}
		if raw, present := b["size"]; present {
			n, ok := plainInt(raw)
			if !ok {
				return nil, false
			}
			l.Size = &n
		}
		return l, true
	case "resource":
		raw, present := b["resource"]
		if !present || len(raw) == 0 || raw[0] != '{' {
			return nil, false
		}
		var r map[string]json.RawMessage
		if err := json.Unmarshal(raw, &r); err != nil || !onlyMembers(r, resourceMembers) {
			return nil, false
		}
		rc := &mcp.ResourceContents{}
		var ok1, ok2, ok3, ok4, ok5 bool
		rc.URI, ok1 = plainString(r, "uri")
		rc.MIMEType, ok2 = plainString(r, "mimeType")
		rc.Text, ok3 = plainString(r, "text")
		rc.Blob, ok4 = plainBytes(r, "blob", false)
		rc.Meta, ok5 = plainMeta(r)
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
			return nil, false
		}
		return &mcp.EmbeddedResource{Resource: rc, Meta: meta}, true
	}
	return nil, false
}

// onlyMembers reports whether every member of b is one of names (an
// unknown kind has none).
func onlyMembers(b map[string]json.RawMessage, names []string) bool {
	if names == nil {
		return false
	}
	for k := range b {
		if !slices.Contains(names, k) {
			return false
		}
	}
	return true
}

// plainString is member name of b as a string: "" when absent; ok is
// false when it is not a JSON string (null included).
func plainString(b map[string]json.RawMessage, name string) (string, bool) {
	raw, present := b[name]
	if !present {
		return "", true
	}
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// plainBytes is member name of b as canonical standard base64 (no
// whitespace, padded, zero padding bits): nil when absent; ok is false
// otherwise, and for "" unless empty is allowed.
func plainBytes(b map[string]json.RawMessage, name string, empty bool) ([]byte, bool) {
	raw, present := b[name]
	if !present {
		return nil, true
	}
	s, ok := plainString(b, name)
	if !ok || (s == "" && !empty) || strings.ContainsAny(string(raw), "\\") {
		return nil, false
	}
	d, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, false
	}
	return d, true
}

// plainMeta is b's _meta: nil when absent; ok is false when it is not a
// JSON object.
func plainMeta(b map[string]json.RawMessage) (mcp.Meta, bool) {
	raw, present := b["_meta"]
	if !present {
		return nil, true
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, false
	}
	return m, true
}

// plainInt is raw as an int64 when it is an integer in plain digits
// (an optional minus sign, no fraction or exponent) that fits.
func plainInt(raw json.RawMessage) (int64, bool) {
	s := string(raw)
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || strings.Trim(digits, "0123456789") != "" || (len(digits) > 1 && digits[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
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
