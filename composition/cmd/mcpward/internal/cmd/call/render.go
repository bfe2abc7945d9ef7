package call

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/ports"
)

// Indent is what starts every line of a result's text but the first.
const Indent = "  "

// WriteContent writes a result for people: its blocks one after the other
// (text as it is; an image or audio block as "[image image/png, N
// bytes]"; a resource link as "[resource link NAME: URI]"; an embedded
// resource as "[resource URI]" followed by its text, or with its MIME type
// and size when it is binary), then the structured content, if any, as
// indented JSON after a "[structured content]" line — unless a text block
// already holds the same JSON value (as the protocol asks a tool that
// returns structured content to do), which would only repeat it. Every character that
// could drive a terminal is escaped (termsafe), and every line but the
// first is indented by Indent (an empty line stays empty), so no line of
// a result can pass for one of mcpward's own.
func WriteContent(w io.Writer, res ports.ToolResult) {
	var lines []string
	for _, b := range res.Blocks {
		lines = append(lines, blockLines(b)...)
	}
	if len(res.StructuredContent) > 0 && !structuredInText(res) {
		lines = append(lines, "[structured content]")
		var buf bytes.Buffer
		if json.Indent(&buf, res.StructuredContent, "", "  ") == nil {
			lines = append(lines, strings.Split(termsafe.Text(buf.String()), "\n")...)
		} else {
			lines = append(lines, "[unreadable structured content]")
		}
	}
	for i, l := range lines {
		if i > 0 && l != "" {
			l = Indent + l
		}
		fmt.Fprintln(w, l)
	}
}

// structuredInText reports whether a text block of res is the same JSON
// value as its structured content (keys in any order, whitespace and
// number spelling aside).
func structuredInText(res ports.ToolResult) bool {
	want, ok := decodeJSON(res.StructuredContent)
	if !ok {
		return false
	}
	for _, b := range res.Blocks {
		if b.Kind != ports.ContentText {
			continue
		}
		if got, ok := decodeJSON([]byte(b.Text)); ok && reflect.DeepEqual(got, want) {
			return true
		}
	}
	return false
}

// decodeJSON decodes one JSON value, numbers as float64 (1 and 1.0 alike).
func decodeJSON(b []byte) (any, bool) {
	var v any
	if len(bytes.TrimSpace(b)) == 0 || json.Unmarshal(b, &v) != nil {
		return nil, false
	}
	return v, true
}

// blockLines renders one block as lines (not yet indented).
func blockLines(b ports.ContentBlock) []string {
	textLines := func(s string) []string { return strings.Split(termsafe.Text(s), "\n") }
	binary := func(kind, mime string, n int) string {
		s := "[" + kind
		if mime != "" {
			s += " " + termsafe.Line(mime)
		}
		return s + ", " + strconv.Itoa(n) + " bytes]"
	}
	switch b.Kind {
	case ports.ContentText:
		return textLines(b.Text)
	case ports.ContentImage, ports.ContentAudio:
		return []string{binary(string(b.Kind), b.MIMEType, len(b.Data))}
	case ports.ContentResourceLink:
		s := "[resource link "
		if b.Name != "" {
			s += termsafe.Line(b.Name) + ": "
		}
		return []string{s + termsafe.Line(b.URI) + "]"}
	case ports.ContentResource:
		if b.Data != nil {
			return []string{binary("resource "+termsafe.Line(b.URI), b.MIMEType, len(b.Data))}
		}
		return append([]string{"[resource " + termsafe.Line(b.URI) + "]"}, textLines(b.Text)...)
	}
	return []string{"[" + termsafe.Line(string(b.Kind)) + " content]"}
}

// explainResultError is the note of a result whose structured content
// did not match the tool's output schema, which adds the path to what the
// error says: "structured content /a: expected number, got string" (the
// path's names are the server's, escaped; no value is ever part of it).
// It is "" for any other error — an argument error's refusal carries its
// path in Detail already — and when the path is the root ("/"), which
// adds nothing.
func explainResultError(err error) string {
	var se *catalog.StructuredContentError
	if errors.As(err, &se) && se.Path != "/" {
		return "structured content " + termsafe.Line(se.Explain())
	}
	return ""
}
