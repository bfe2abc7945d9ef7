package mcpsession

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"

	"github.com/mcpward/mcpward/adapters/mcpsession/internal/sdkjson"
	"github.com/mcpward/mcpward/core/jsontext"
	"github.com/mcpward/mcpward/ports"
)

// A tools/list page with its schemas kept as the bytes the server sent.
//
// The SDK decodes every tool's inputSchema and outputSchema into a
// map[string]any tree, which the catalog then narrows; on a listing of
// many tools that decoding was the largest part of the client's CPU
// (BENCHMARKS.md, "The 10k listing"). ports.ToolItem lets a schema be a
// json.RawMessage instead, which the catalog reads exactly as it reads the
// tree encoding/json's Unmarshal decodes from those bytes. So the own path
// decodes a page into rawToolsPage, the SDK's own types with the two
// schema fields shadowed by json.RawMessage (segmentio keeps the bytes of
// such a value, checked by its parser, without building anything), with
// the same segmentio call and flags as the SDK (parseAsSDK), and hands the
// bytes on where that is provably what the SDK's path gives. The rules:
//
//   - Everything but the two schemas is decoded into the SDK's own types
//     (the embedded mcp.ListToolsResult and mcp.Tool; the shallower
//     schema fields win over theirs, as in encoding/json), so every other
//     field of a ToolItem is what toolItem gives for the SDK's tool.
//   - Segmentio and encoding/json decode the same bytes into the same any
//     when the bytes are valid UTF-8 and hold no \u escape (the two
//     differ on invalid UTF-8 and on escaped surrogates; the other escapes
//     decode alike) and when every number is one strconv.ParseFloat takes
//     (both decode a number with it). A schema that is not valid UTF-8 or
//     holds `\u` anywhere is decoded here into the SDK's tree instead
//     (parseAsSDK of its bytes: the SDK's decode of that value), per tool.
//   - A number ParseFloat refuses (out of float64's range) makes the SDK's
//     decode of the whole page fail, wherever it is, even in a member a
//     later duplicate replaces; numbersInRange checks every number of the
//     page, and where one fails the page takes the tree decode
//     (decodeListTools), which fails as the SDK does.
//   - headerFree (no null tool, no "x-mcp-header" key in a property of an
//     inputSchema at any depth, keys compared after decoding) is decided
//     on the bytes where it can be, conservatively otherwise: a decoded
//     key is "x-mcp-header" only if its bytes are that text or hold an
//     escape (\u; no other escape writes a letter or '-'). An inputSchema
//     whose bytes contain neither "x-mcp-header" nor `\u` has no such key;
//     any other is decoded into its tree and headerIn decides. A page with
//     a null tool or a header is left to today's path (the tree decode,
//     then the SDK's ListTools through injectPage).
//   - null and an absent schema are nil, as the SDK's decode into an any
//     gives (never a json.RawMessage("null") or a typed nil).
//   - A page the mirror does not decode takes the tree decode, whose
//     error is the one the SDK's path gives.
//
// FuzzListToolsTaken holds the whole to the SDK's ListTools alone, a raw
// schema compared as the tree encoding/json decodes from it.

// rawToolsPage is an mcp.ListToolsResult whose tools keep their schemas raw.
type rawToolsPage struct {
	mcp.ListToolsResult
	Tools []*rawTool `json:"tools"`
}

// rawTool is an mcp.Tool whose inputSchema and outputSchema are the bytes
// the server sent (aliasing the page, which roundTrip's result owns).
type rawTool struct {
	mcp.Tool
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
}

// rawPageFlags are parseAsSDK's flags, and DontCopyRawMessage: the
// schemas alias raw, a result roundTrip returns that nobody else holds or
// reuses (the wire codec copies it out of the message).
const rawPageFlags = segjson.DontMatchCaseInsensitiveStructFields | segjson.DontCopyRawMessage

// decodeToolsPage decodes raw, a tools/list result, keeping its tools'
// schemas raw where the rules above allow. ok is false when the page must
// take the tree decode (decodeListTools) instead: it does not decode
// here, it is nested deeper than the SDK decodes, a number is out of
// float64's range, a tool is null, or an inputSchema has an x-mcp-header
// property. Otherwise the page's tools are those toolItem gives for the
// SDK's decode of raw, a schema either that same tree or a
// json.RawMessage Unmarshal decodes into it.
// A panic in the decoder (noPanic) is a page not taken, like any page it
// does not decode: the tree decode then decides it.
func decodeToolsPage(raw json.RawMessage) (*rawToolsPage, []ports.ToolItem, bool) {
	var tools []ports.ToolItem
	p, err := noPanic(func() (*rawToolsPage, error) {
		p, t, ok := readToolsPage(raw)
		if !ok {
			return nil, errMalformed // not taken; the error is not kept
		}
		tools = t
		return p, nil
	})
	return p, tools, err == nil
}

// readToolsPage is decodeToolsPage without the guard.
func readToolsPage(raw json.RawMessage) (*rawToolsPage, []ports.ToolItem, bool) {
	if sdkjson.TooDeep(raw) || !numbersInRange(raw) {
		return nil, nil, false
	}
	p := new(rawToolsPage)
	if _, err := segjson.Parse(raw, p, rawPageFlags); err != nil {
		return nil, nil, false
	}
	tools := make([]ports.ToolItem, len(p.Tools))
	for i, t := range p.Tools {
		if t == nil {
			return nil, nil, false
		}
		in, ok := schemaValue(t.InputSchema, true)
		if !ok {
			return nil, nil, false
		}
		out, ok := schemaValue(t.OutputSchema, false)
		if !ok {
			return nil, nil, false
		}
		tools[i] = toolItem(&t.Tool)
		tools[i].InputSchema, tools[i].OutputSchema = in, out
	}
	return p, tools, true
}

var (
	escapeU     = []byte(`\u`)
	headerBytes = []byte(headerKey)
)

// schemaValue is a ToolItem's schema for b, a schema's bytes as received
// (nil when absent): nil for an absent or null schema; b itself when it is
// valid UTF-8 without a \u escape (and, for an inputSchema, without the
// text "x-mcp-header"); otherwise the tree the SDK decodes from b. ok is
// false when that tree does not decode or, for an inputSchema, has an
// x-mcp-header property (headerIn).
func schemaValue(b json.RawMessage, input bool) (any, bool) {
	if len(b) == 0 || string(b) == "null" {
		return nil, true
	}
	if !bytes.Contains(b, escapeU) && (!input || !bytes.Contains(b, headerBytes)) && utf8.Valid(b) {
		return b, true
	}
	var v any
	if err := parseAsSDK(b, &v); err != nil {
		return nil, false
	}
	if input && headerIn(v) {
		return nil, false
	}
	return v, true
}

// numbersInRange reports whether every number of b, one valid JSON text,
// is one strconv.ParseFloat takes (both decoders' conversion of a number
// into an any). Outside strings, only numbers hold a digit or '-'; a
// number without an exponent and of at most maxPlainDigits bytes is in
// range, any other is parsed.
func numbersInRange(b []byte) bool {
	const maxPlainDigits = 300
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			if i = jsontext.SkipString(b, i); i < 0 {
				return true // a string that does not end holds no number
			}
		case c == '-' || '0' <= c && c <= '9':
			start, exp := i, false
			for i < len(b) {
				c := b[i]
				if c == 'e' || c == 'E' {
					exp = true
				} else if !(c == '-' || c == '+' || c == '.' || '0' <= c && c <= '9') {
					break
				}
				i++
			}
			if exp || i-start > maxPlainDigits {
				if _, err := strconv.ParseFloat(string(b[start:i]), 64); err != nil {
					return false
				}
			}
		default:
			i++
		}
	}
	return true
}
