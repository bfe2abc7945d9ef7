package mcpsession

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/ports"
)

// The result of a tools/call, read from its raw JSON.
//
// The SDK's path decodes a result into mcp.CallToolResult and
// convertResult encodes its parts again (marshalContent, json.Marshal of
// structuredContent and of _meta without the protocol's keys). For the
// results ordinary servers write — text blocks, JSON that encoding/json
// would write the same way again — that round trip gives back the bytes it
// started from, so rawCallResult slices them out of the result instead,
// after checking that they are exactly what the round trip would write
// ("canonical" below). Anything else (another block type, a key out of
// order, a fraction, an escape encoding/json would write differently, an
// "input required" result, an unknown member) is not taken: the caller
// decodes it with the SDK's type and goes the SDK's way, so the outcome is
// the same whichever way a result goes (TestRawCallResultAgrees and
// FuzzRawCallResult hold them to it).

// rawMaxDepth bounds the nesting rawCallResult walks; a deeper value goes
// the SDK's way.
const rawMaxDepth = 64

// rawCallResult returns the CallResult of raw, a tools/call result, and
// true when raw is in the shape it takes (see above); the parts it returns
// are sub-slices of raw, capacity cut to length. It never fails: false
// means "decode it with the SDK".
func rawCallResult(raw []byte) (ports.CallResult, bool) {
	r := rawScanner{b: raw}
	var out ports.CallResult
	var seenContent, seenError, seenStructured, seenMeta, seenType bool
	r.space()
	if !r.byte('{') {
		return ports.CallResult{}, false
	}
	for {
		r.space()
		key, ok := r.plainKey()
		if !ok {
			return ports.CallResult{}, false
		}
		r.space()
		if !r.byte(':') {
			return ports.CallResult{}, false
		}
		r.space()
		start := r.i
		switch string(key) {
		case "content":
			if seenContent || !r.textContent() {
				return ports.CallResult{}, false
			}
			seenContent = true
			out.Content = raw[start:r.i:r.i]
		case "isError":
			if seenError {
				return ports.CallResult{}, false
			}
			seenError = true
			switch {
			case r.literal("true"):
				out.IsError = true
			case r.literal("false"):
			default:
				return ports.CallResult{}, false
			}
		case "structuredContent":
			if seenStructured {
				return ports.CallResult{}, false
			}
			seenStructured = true
			if r.literal("null") {
				break
			}
			if !r.value(true, 0) {
				return ports.CallResult{}, false
			}
			out.StructuredContent = raw[start:r.i:r.i]
		case "_meta":
			if seenMeta {
				return ports.CallResult{}, false
			}
			seenMeta = true
			if r.literal("null") {
				break
			}
			m, ok := r.resultMeta()
			if !ok {
				return ports.CallResult{}, false
			}
			out.Meta = m
		case "resultType":
			// A complete result says so on a modern session; any other
			// type (input required) goes the SDK's way.
			if seenType || !r.literal(`"complete"`) {
				return ports.CallResult{}, false
			}
			seenType = true
		default:
			return ports.CallResult{}, false
		}
		r.space()
		if r.byte(',') {
			continue
		}
		if !r.byte('}') {
			return ports.CallResult{}, false
		}
		break
	}
	r.space()
	if r.i != len(raw) || !seenContent {
		return ports.CallResult{}, false
	}
	return out, true
}

// decodeCallResult decodes raw as the SDK's client session decodes a
// tools/call result, for the results rawCallResult does not take. Its
// error is shaped as the SDK's (classified by s.failure the same way); a
// panic of the SDK's decoder is errMalformed, as guarded makes it.
func decodeCallResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	return noPanic(func() (*mcp.CallToolResult, error) {
		res := new(mcp.CallToolResult)
		if err := json.Unmarshal(raw, res); err != nil {
			return nil, fmt.Errorf("calling %q: %w", methodCallTool, err)
		}
		return res, nil
	})
}

// methodCallTool is the method of a tool call.
const methodCallTool = "tools/call"

// rawScanner walks a JSON text.
type rawScanner struct {
	b []byte
	i int
}

func (r *rawScanner) space() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// byte consumes c when it is next.
func (r *rawScanner) byte(c byte) bool {
	if r.i < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

// literal consumes lit when it is next.
func (r *rawScanner) literal(lit string) bool {
	if bytes.HasPrefix(r.b[r.i:], []byte(lit)) {
		r.i += len(lit)
		return true
	}
	return false
}

// plainKey consumes a member name without escapes and returns its bytes
// (which are then its value).
func (r *rawScanner) plainKey() ([]byte, bool) {
	if !r.byte('"') {
		return nil, false
	}
	start := r.i
	for r.i < len(r.b) {
		switch c := r.b[r.i]; {
		case c == '"':
			r.i++
			return r.b[start : r.i-1], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
		r.i++
	}
	return nil, false
}

// textHeadMember opens a text block as TextContent.MarshalJSON writes it,
// up to its text.
const textHeadMember = `{"type":"text","text":`

// textContent consumes a content array of plain text blocks written as
// marshalContent writes them: no space, each block exactly
// {"type":"text","text":<canonical string>}.
func (r *rawScanner) textContent() bool {
	if !r.byte('[') {
		return false
	}
	if r.byte(']') {
		return true
	}
	for {
		if !r.literal(textHeadMember) || !r.str(true) || !r.byte('}') {
			return false
		}
		if r.byte(',') {
			continue
		}
		return r.byte(']')
	}
}

// str consumes a string. canonical: only when encoding/json would write
// its value back as these very bytes (jsontext.AppendString); otherwise
// only when the SDK's decoder reads it without doubt (no invalid UTF-8,
// no escaped surrogate).
func (r *rawScanner) str(canonical bool) bool {
	if !r.byte('"') {
		return false
	}
	for r.i < len(r.b) {
		c := r.b[r.i]
		switch {
		case c == '"':
			r.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if r.i+1 >= len(r.b) {
				return false
			}
			switch r.b[r.i+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				r.i += 2
			case '/':
				if canonical {
					return false
				}
				r.i += 2
			case 'u':
				v, ok := hex4(r.b[r.i+2:], canonical)
				if !ok || v >= 0xD800 && v < 0xE000 {
					return false
				}
				if canonical && !escapedByEncoder(v) {
					return false
				}
				r.i += 6
			default:
				return false
			}
		case c < utf8.RuneSelf:
			if canonical && (c == '<' || c == '>' || c == '&') {
				return false
			}
			r.i++
		default:
			ru, n := utf8.DecodeRune(r.b[r.i:])
			if ru == utf8.RuneError && n == 1 || canonical && (ru == '\u2028' || ru == '\u2029') {
				return false
			}
			r.i += n
		}
	}
	return false
}

// escapedByEncoder reports whether encoding/json writes rune v as \u00xx
// or \u20xx (jsontext.AppendString).
func escapedByEncoder(v rune) bool {
	switch v {
	case '\b', '\f', '\n', '\r', '\t':
		return false // written as \b, \f, \n, \r, \t
	case '<', '>', '&', '\u2028', '\u2029':
		return true
	}
	return v < 0x20
}

// hex4 reads four hex digits (lower case only when lower).
func hex4(b []byte, lower bool) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var v rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F' && !lower:
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// value consumes one JSON value with no space in it. canonical: only when
// encoding/json would write the value the SDK's decoder reads from it
// (objects become maps: member names without escapes, in strictly
// ascending order; numbers: integers of at most 15 digits) as these very
// bytes. Otherwise: only when the SDK's decoder reads it without doubt
// (member names in any order, numbers of at most 15 digits without
// exponent).
func (r *rawScanner) value(canonical bool, depth int) bool {
	if r.i >= len(r.b) || depth > rawMaxDepth {
		return false
	}
	switch c := r.b[r.i]; {
	case c == '{':
		r.i++
		if r.byte('}') {
			return true
		}
		var prev []byte
		for {
			key, ok := r.plainKey()
			if !ok || canonical && (!canonicalKey(key) || prev != nil && bytes.Compare(prev, key) >= 0) {
				return false
			}
			prev = key
			if !r.byte(':') || !r.value(canonical, depth+1) {
				return false
			}
			if r.byte(',') {
				continue
			}
			return r.byte('}')
		}
	case c == '[':
		r.i++
		if r.byte(']') {
			return true
		}
		for {
			if !r.value(canonical, depth+1) {
				return false
			}
			if r.byte(',') {
				continue
			}
			return r.byte(']')
		}
	case c == '"':
		return r.str(canonical)
	case c == 't':
		return r.literal("true")
	case c == 'f':
		return r.literal("false")
	case c == 'n':
		return r.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return r.number(canonical)
	}
	return false
}

// canonicalKey reports whether a member name without escapes (plainKey)
// is written back as the same bytes: no byte encoding/json escapes.
func canonicalKey(k []byte) bool {
	for i := 0; i < len(k); {
		c := k[i]
		if c < utf8.RuneSelf {
			if c == '<' || c == '>' || c == '&' {
				return false
			}
			i++
			continue
		}
		ru, n := utf8.DecodeRune(k[i:])
		if ru == utf8.RuneError && n == 1 || ru == '\u2028' || ru == '\u2029' {
			return false
		}
		i += n
	}
	return true
}

// number consumes an integer of at most 15 digits (exactly a float64,
// which encoding/json writes back digit for digit; no "-0"), or, when not
// canonical, one with a fraction and at most 15 digits in all.
func (r *rawScanner) number(canonical bool) bool {
	neg := r.byte('-')
	digits := 0
	if r.byte('0') {
		digits = 1
		if canonical && neg {
			return false
		}
	} else {
		for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
			r.i++
			digits++
		}
		if digits == 0 {
			return false
		}
	}
	if r.byte('.') {
		if canonical {
			return false
		}
		n := 0
		for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
			r.i++
			n++
		}
		if n == 0 {
			return false
		}
		digits += n
	}
	if r.i < len(r.b) && (r.b[r.i] == 'e' || r.b[r.i] == 'E') {
		return false
	}
	return digits <= 15
}

// resultMeta consumes a result's _meta object (no space in it) and
// returns what convertResult makes of it: nil when it has no member but
// the protocol's own (protocolMetaPrefix), else an object of the other
// members, which must be canonical. The protocol's members are dropped
// and need only decode.
func (r *rawScanner) resultMeta() (json.RawMessage, bool) {
	start := r.i
	if !r.byte('{') {
		return nil, false
	}
	if r.byte('}') {
		return nil, true
	}
	type span struct{ from, to int }
	var keptBuf [8]span
	kept := keptBuf[:0]
	dropped := false
	var prev []byte
	for {
		from := r.i
		key, ok := r.plainKey()
		if !ok || !r.byte(':') {
			return nil, false
		}
		if bytes.HasPrefix(key, []byte(protocolMetaPrefix)) {
			dropped = true
			if !r.value(false, 1) {
				return nil, false
			}
		} else {
			if !canonicalKey(key) || prev != nil && bytes.Compare(prev, key) >= 0 || !r.value(true, 1) {
				return nil, false
			}
			prev = key
			kept = append(kept, span{from, r.i})
		}
		if r.byte(',') {
			continue
		}
		if !r.byte('}') {
			return nil, false
		}
		break
	}
	switch {
	case len(kept) == 0:
		return nil, true
	case !dropped:
		return r.b[start:r.i:r.i], true
	}
	n := 2
	for _, s := range kept {
		n += s.to - s.from + 1
	}
	out := make([]byte, 0, n)
	out = append(out, '{')
	for i, s := range kept {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, r.b[s.from:s.to]...)
	}
	return append(out, '}'), true
}
