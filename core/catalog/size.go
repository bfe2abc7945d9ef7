package catalog

import (
	"encoding/json"

	"github.com/mcpward/mcpward/ports"
)

// maxSizeDepth bounds how deep toolSize follows a decoded value: deeper
// than encoding/json, which refuses JSON nested over 10,000 levels,
// decodes. A value nested deeper (or a cyclic Go value, which no decoder
// makes) counts as exceeding any byte bound.
const maxSizeDepth = 10_001

// Estimated sizes, in bytes of compact JSON, of decoded values.
const (
	// sizeNumber is a number's size: a decoded float64 takes 8 bytes,
	// and most numbers of a schema are shorter in JSON.
	sizeNumber = 8
	// sizeOther is the size of a Go value encoding/json does not make
	// (ports.ToolItem forbids them): the size of an interface's data.
	sizeOther = 8
	// sizeTool is the fixed part of a tool: the braces and the member
	// names of "name", "inputSchema" and the like.
	sizeTool = 32
	// sizeDropped is the fixed part of a ports.DroppedTool.
	sizeDropped = 16
	// sizeAnnotations is the fixed part of a tool's annotations: the
	// member names and values of its four hints.
	sizeAnnotations = 96
)

// toolSize returns the estimated size, in bytes of compact JSON, of the
// tool as the session delivered it: sizeTool plus the lengths of its name,
// title and description plus the sizes of its inputSchema, _meta and
// outputSchema (see valueSize), plus sizeAnnotations and the annotations'
// title when it has annotations. Once the size exceeds limit it stops and returns a value
// over limit, so the walk costs at most about limit steps whatever the
// tool holds. A schema that is a json.RawMessage counts what valueSize
// counts for the value Unmarshal decodes from it (see schemaSize); its
// bytes, already in memory, are read whole, in time linear in their
// length.
func toolSize(it *ports.ToolItem, limit int64) int64 {
	c := canons.Get().(*canon)
	defer canons.Put(c)
	return toolSizeForms(it, limit, c, nil)
}

// toolSizeForms is toolSize with the scratch c; when forms is not nil, it
// adds the canonical form of the tool's raw input schema (or none) to it.
func toolSizeForms(it *ports.ToolItem, limit int64, c *canon, forms *pageForms) int64 {
	n := int64(sizeTool + len(it.Name) + len(it.Title) + len(it.Description))
	n, canonical := schemaSize(it.InputSchema, n, limit, true, c)
	if forms != nil {
		var form []byte
		if canonical {
			form = c.out
		}
		forms.add(form)
	}
	if it.Meta != nil {
		n = valueSize(it.Meta, n, limit, 0)
	}
	n, _ = schemaSize(it.OutputSchema, n, limit, false, c)
	if it.Annotations != nil {
		n += sizeAnnotations + int64(len(it.Annotations.Title))
	}
	return n
}

// valueSize returns n plus the estimated size of the compact JSON of v,
// decoded as encoding/json decodes into an any: a string counts its length
// and two quotes (its escapes are not counted: decoded, they take one
// byte or a few), a number sizeNumber bytes, true, false and null their
// literal, an array or object its brackets, commas, member names (quoted,
// with the colon) and elements. It stops once the sum exceeds limit and
// returns it (over limit); a value nested over maxSizeDepth levels returns
// limit+1.
func valueSize(v any, n, limit int64, depth int) int64 {
	if n > limit {
		return n
	}
	if depth > maxSizeDepth {
		return max(n, limit+1)
	}
	switch x := v.(type) {
	case nil:
		return n + 4
	case bool:
		return n + 5
	case float64:
		return n + sizeNumber
	case json.Number:
		return n + int64(len(x))
	case string:
		return n + 2 + int64(len(x))
	case []any:
		n += 2
		for _, e := range x {
			if n = valueSize(e, n+1, limit, depth+1); n > limit {
				return n
			}
		}
		return n
	case map[string]any:
		n += 2
		for k, e := range x {
			if n = valueSize(e, n+4+int64(len(k)), limit, depth+1); n > limit {
				return n
			}
		}
		return n
	}
	return n + sizeOther
}
