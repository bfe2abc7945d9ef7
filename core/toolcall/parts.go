package toolcall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// DefaultMaxDescription is the most characters of a tool's description
// Description keeps when its max is 0 (or less).
const DefaultMaxDescription = 1024

// maxNote bounds each server string (a MIME type, a URI, a name) quoted
// in a note that stands for a block an API cannot take.
const maxNote = 256

// Part is one piece of a tool result as a model API takes it: text, or
// an image the API accepts.
type Part struct {
	// Text is the piece's text when Image is nil.
	Text string
	// Image is an image block the API accepts (see Parts), nil for text.
	Image *Image
}

// Image is an image of a tool result.
type Image struct {
	// MIMEType is the server's MIME type of the image, one the images
	// predicate given to Parts accepted.
	MIMEType string
	// Data are the image's bytes (the tool result's own slice, not a copy).
	Data []byte
}

// Structured says how a tool result's structured content reaches a model
// beside its content blocks. The zero value is StructuredFallback.
type Structured int

const (
	// StructuredFallback sends the content blocks, and the structured
	// content (as its JSON text) only when no content block gave a part:
	// the protocol asks a server that returns structured content to
	// mirror it in a text block, so the model reads it once. It is the
	// rule of the Anthropic SDK's own MCP helper, which says the
	// TypeScript and Python SDKs do the same.
	StructuredFallback Structured = iota
	// StructuredAlso sends the content blocks, then the structured
	// content's JSON text unless a text block already holds the same JSON
	// (compared compacted): for servers whose text says something else
	// than their structured content.
	StructuredAlso
	// StructuredOnly sends the structured content's JSON text in place of
	// the content blocks when the result has structured content, the
	// content blocks otherwise: the compact form, for a model that reads
	// JSON at least as well as the server's prose.
	StructuredOnly
)

// Parts returns res as the pieces a model API takes, in the result's
// order: a text block as its text; an image block (or an embedded blob
// resource) whose MIME type images accepts as an Image, any other image,
// audio or blob as a short note in brackets saying what was left out
// (its MIME type and size, never its bytes); a resource link as a note
// with its URI, name and MIME type; an embedded text resource as its URI
// and text. Structured content is sent as structured says (its JSON
// text, compacted; by default only when no content block gave a part),
// then a note when the admission cap cut the result. A result with
// nothing to show is one text part, "(no content)". A result without
// typed Blocks (a host's own ports.Tool that set only Content) gives its
// Content JSON as text. An empty text is left out (the APIs refuse empty
// text blocks). images may be nil (no image accepted). IsError is left to
// the caller: the APIs mark it differently.
func Parts(res ports.ToolResult, images func(mimeType string) bool, structured Structured) []Part {
	var out []Part
	texts := func(s string) {
		if s != "" { // the APIs refuse an empty text block
			out = append(out, Part{Text: s})
		}
	}
	image := func(mime string, data []byte, what string) {
		if images != nil && images(mime) {
			out = append(out, Part{Image: &Image{MIMEType: mime, Data: data}})
			return
		}
		texts(fmt.Sprintf("[%s (%s, %d bytes) left out: the model API takes no such block in a tool result]",
			what, clip(mime), len(data)))
	}
	sc := bytes.TrimSpace(res.StructuredContent)
	switch {
	case structured == StructuredOnly && len(sc) > 0:
		// The structured content stands for the blocks.
	case res.Blocks == nil:
		if c := bytes.TrimSpace(res.Content); len(c) > 0 && !bytes.Equal(c, []byte("[]")) {
			texts(string(c))
		}
	}
	for _, b := range res.Blocks {
		if structured == StructuredOnly && len(sc) > 0 {
			break
		}
		switch b.Kind {
		case ports.ContentText:
			texts(b.Text)
		case ports.ContentImage:
			image(b.MIMEType, b.Data, "image")
		case ports.ContentAudio:
			texts(fmt.Sprintf("[audio (%s, %d bytes) left out: the model API takes no audio in a tool result]", clip(b.MIMEType), len(b.Data)))
		case ports.ContentResourceLink:
			s := "[resource link " + clip(b.URI)
			if b.Name != "" {
				s += ", name " + clip(b.Name)
			}
			if b.MIMEType != "" {
				s += ", " + clip(b.MIMEType)
			}
			texts(s + "]")
		case ports.ContentResource:
			if b.Data != nil {
				image(b.MIMEType, b.Data, "resource "+clip(b.URI))
				continue
			}
			texts("[resource " + clip(b.URI) + "]\n" + b.Text)
		default:
			texts("[a content block of type " + clip(string(b.Kind)) + " left out]")
		}
	}
	if len(sc) > 0 {
		switch structured {
		case StructuredAlso:
			if !hasJSON(out, sc) {
				texts(compact(sc))
			}
		case StructuredOnly:
			texts(compact(sc))
		default:
			if len(out) == 0 {
				texts(compact(sc))
			}
		}
	}
	if res.Truncated {
		texts("[the result was cut to the host's size limit]")
	}
	if len(out) == 0 {
		texts("(no content)")
	}
	return out
}

// hasJSON reports whether a text part holds JSON equal to v (compared
// compacted).
func hasJSON(parts []Part, v []byte) bool {
	want := compact(v)
	for _, p := range parts {
		if p.Image == nil && compact([]byte(strings.TrimSpace(p.Text))) == want {
			return true
		}
	}
	return false
}

// compact returns v compacted, or v unchanged when it is not JSON.
func compact(v []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return string(v)
	}
	return b.String()
}

// clip cuts a server string quoted in a note to maxNote bytes, at a
// character boundary.
func clip(s string) string {
	if len(s) <= maxNote {
		return s
	}
	n := maxNote
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// ErrorText returns what a model reads of a call that was not made or
// failed: "error: " with the refusal's class and reason words and its
// fixed detail phrase, and for invalid arguments where they broke the
// schema and what was expected (never the argument's value). It holds no
// server id, origin or secret: only words mcpward chose, and for an
// argument error the property path and expectation the tool's schema
// gave. An error that is not a *refusal.Error reads "error: internal
// unclassified" (its text is never used: it may hold anything).
func ErrorText(err error) string {
	var ae *catalog.ArgumentError
	if errors.As(err, &ae) {
		class, reason := refusal.Config.String(), catalog.ReasonInvalidArguments
		if r := (*refusal.Error)(nil); errors.As(err, &r) {
			class, reason = r.Class.String(), r.Reason
		}
		return "error: " + class + " " + reason + ": " + ae.Explain()
	}
	var r *refusal.Error
	if !errors.As(err, &r) {
		return "error: internal " + ReasonUnclassified
	}
	s := "error: " + r.Class.String() + " " + r.Reason
	if r.Detail != "" {
		s += ": " + r.Detail
	}
	return s
}

// Description returns the text a model API gets as spec's description:
// its Description, else its Title, cut to max characters (0 or less:
// DefaultMaxDescription) with "…" when longer.
func Description(spec ports.ToolSpec, max int) string {
	if max <= 0 {
		max = DefaultMaxDescription
	}
	d := spec.Description
	if strings.TrimSpace(d) == "" {
		d = spec.Title
	}
	if utf8.RuneCountInString(d) <= max {
		return d
	}
	n := 0
	for i := range d {
		if n == max-1 {
			return d[:i] + "…"
		}
		n++
	}
	return d
}

// Schema returns spec's input schema as the model APIs take it: a JSON
// object with "type": "object" and a "properties" object, without the
// top-level members they refuse or need not see ("$schema", and the
// combinators "oneOf", "anyOf", "allOf", "not", "enum", which the
// Anthropic API refuses at the top). Dropping them only widens what the
// model is told: the tool still validates its arguments against its whole
// schema when called. A schema that is not a JSON object gives
// {"type":"object","properties":{}}. The values are the schema's own
// JSON, undecoded.
func Schema(spec ports.ToolSpec) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(spec.InputSchema, &m) != nil || m == nil {
		m = map[string]json.RawMessage{}
	}
	for _, k := range []string{"$schema", "oneOf", "anyOf", "allOf", "not", "enum"} {
		delete(m, k)
	}
	m["type"] = json.RawMessage(`"object"`)
	if p := bytes.TrimSpace(m["properties"]); len(p) == 0 || p[0] != '{' {
		m["properties"] = json.RawMessage(`{}`)
	}
	if r := bytes.TrimSpace(m["required"]); len(r) > 0 && r[0] != '[' {
		delete(m, "required")
	}
	return m
}

// ValidName reports whether name is a tool name both the Anthropic and
// the OpenAI APIs accept: 1 to 64 of [a-zA-Z0-9_-]. Every host-facing
// name of core/catalog is (see catalog.ToolName).
func ValidName(name string) bool {
	if name == "" || len(name) > catalog.MaxToolNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
