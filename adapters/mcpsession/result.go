package mcpsession

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/core/jsontext"
	"github.com/mcpward/mcpward/ports"
)

// toolItem converts one listed tool. Schemas and _meta are the SDK's
// decoded values, shared and read-only.
func toolItem(t *mcp.Tool) ports.ToolItem {
	return ports.ToolItem{
		Name:         t.Name,
		Title:        t.Title,
		Description:  t.Description,
		InputSchema:  t.InputSchema,
		Meta:         t.Meta,
		OutputSchema: t.OutputSchema,
		Annotations:  toolAnnotations(t.Annotations),
	}
}

// toolAnnotations converts a tool's annotations. The SDK decodes
// readOnlyHint and idempotentHint into plain bools, so a hint that is
// absent and one that is false look alike; both default to false in the
// protocol, so only true is reported (nil otherwise). destructiveHint and
// openWorldHint keep their absence.
func toolAnnotations(a *mcp.ToolAnnotations) *ports.ToolAnnotations {
	if a == nil {
		return nil
	}
	out := &ports.ToolAnnotations{Title: a.Title, DestructiveHint: cloneBool(a.DestructiveHint), OpenWorldHint: cloneBool(a.OpenWorldHint)}
	if a.ReadOnlyHint {
		out.ReadOnlyHint = cloneBool(&a.ReadOnlyHint)
	}
	if a.IdempotentHint {
		out.IdempotentHint = cloneBool(&a.IdempotentHint)
	}
	return out
}

func cloneBool(b *bool) *bool {
	if b == nil {
		return nil
	}
	v := *b
	return &v
}

// marshalContent encodes content as a JSON array. Plain text items (no
// _meta, no annotations), the common case, are written directly, byte for
// byte as their MarshalJSON writes them; every other item calls its own
// MarshalJSON (compact JSON) rather than json.Marshal, which would reflect
// over the slice and compact every item's output again.
func marshalContent(content []mcp.Content) (json.RawMessage, error) {
	if len(content) == 0 {
		return json.RawMessage("[]"), nil
	}
	n := 1 + len(content)
	for _, c := range content {
		if t, ok := c.(*mcp.TextContent); ok && t != nil {
			n += len(textHead) + len(t.Text) + 3 + escapeGrowth(t.Text)
		} else {
			n += 64
		}
	}
	buf := make([]byte, 0, n)
	buf = append(buf, '[')
	for i, c := range content {
		if i > 0 {
			buf = append(buf, ',')
		}
		t, isText := c.(*mcp.TextContent)
		if c == nil || isText && t == nil {
			return nil, errMalformed
		}
		if isText && t.Meta == nil && t.Annotations == nil {
			buf = append(buf, textHead...)
			buf = jsontext.AppendString(buf, t.Text)
			buf = append(buf, '}')
			continue
		}
		b, err := c.MarshalJSON()
		if err != nil {
			return nil, err
		}
		buf = append(buf, b...)
	}
	return append(buf, ']'), nil
}

// escapeGrowth is how many bytes writing s as a JSON string adds for its
// quotes, backslashes and control characters, so the buffer is sized once
// (a text holding JSON, as many tools return, has a quote every few bytes;
// invalid UTF-8, which grows too, is rare and may still regrow it).
func escapeGrowth(s string) int {
	g := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			g++
		case c < 0x20:
			g += 5
		}
	}
	return g
}

// textHead opens a plain text content item as TextContent.MarshalJSON
// writes it.
const textHead = `{"type":"text","text":`

// sdkUnknownContentPhrase is the fixed phrase of the go-sdk's (v1.8.0)
// error for a content block of a type it does not know (mcp/content.go);
// the SDK refuses the whole result while decoding it. Matched, never
// copied; TestCallMalformedResult fails if a newer SDK changes it.
const sdkUnknownContentPhrase = "unrecognized content type"

// isUnknownContent reports the SDK's error for a result with a content
// block of an unknown type.
func isUnknownContent(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.Contains(e.Error(), sdkUnknownContentPhrase) {
			return true
		}
	}
	return false
}
