package mcpsession

import (
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
