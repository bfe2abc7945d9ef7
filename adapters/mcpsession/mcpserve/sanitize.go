package mcpserve

import (
	"bytes"
	"encoding/json"

	"github.com/mcpward/mcpward/core/textsafe"
)

// Bounds of the text a Server hands its clients about what it offers.
const (
	// DefaultMaxDescription is the default of Options.MaxDescription: 8 KiB.
	DefaultMaxDescription = 8 << 10
	// DefaultMaxTitle is the default of Options.MaxTitle.
	DefaultMaxTitle = 512
)

// text is the rule a Server applies to every name, title and description
// it hands its clients (the fronted servers wrote them): textsafe's
// escapes (controls, escape sequences, bidirectional and invisible
// characters; newlines kept in descriptions only) and a cap with a
// visible marker naming the length the server wrote (textsafe.Fit).
type text struct{ maxDesc, maxTitle int }

// line is a name, title or MIME type as handed on.
func (x text) line(s string) string { return textsafe.Fit(s, x.maxTitle, false) }

// desc is a description as handed on.
func (x text) desc(s string) string { return textsafe.Fit(s, x.maxDesc, true) }

// safeURI reports whether a URI or URI template may be handed on as it is:
// one with a character the rule would change is not (a URI is an
// identifier a client reads back; it cannot be rewritten, and RFC 3986
// has no raw control, space or invisible character).
func safeURI(s string) bool { return textsafe.Safe(s, false) }

// schema returns raw with every "description" and "title" string of the
// schema (at any depth) handed on under the rule; raw itself when nothing
// changes or raw is not JSON (the caller's check refuses it then).
// Property names, enum and default values pass as they are: a client
// sends them back.
func (x text) schema(raw json.RawMessage) json.RawMessage {
	if len(raw) <= x.maxTitle && !needsLook(raw) || !json.Valid(raw) {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	if !x.walk(v) {
		return raw
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}

// needsLook reports whether a JSON text may hold a string the rule
// changes: one with a byte past ASCII or an escape.
func needsLook(raw []byte) bool {
	for _, c := range raw {
		if c >= 0x80 || c == '\\' {
			return true
		}
	}
	return false
}

// walk applies the rule to v in place and reports whether it changed.
func (x text) walk(v any) bool {
	changed := false
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if str, ok := e.(string); ok && (k == "description" || k == "title") {
				clean := x.line(str)
				if k == "description" {
					clean = x.desc(str)
				}
				if clean != str {
					v[k] = clean
					changed = true
				}
				continue
			}
			changed = x.walk(e) || changed
		}
	case []any:
		for _, e := range v {
			changed = x.walk(e) || changed
		}
	}
	return changed
}
