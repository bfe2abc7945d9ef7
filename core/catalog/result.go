package catalog

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Refusal reasons of a result Tool.Call cannot hand over (Class Protocol;
// the server broke the protocol or a local bound, and the session stays
// usable).
const (
	// ReasonUnknownContentType: a content block's "type" is not one of
	// the five the protocol defines (text, image, audio, resource_link,
	// resource). The protocol's list is closed, so the result is refused
	// rather than handed over with a block the host cannot read.
	ReasonUnknownContentType = "unknown_content_type"
	// ReasonBinaryTooLarge: an image, audio or embedded blob block holds
	// more bytes than the tool's binary limit (Options.MaxBinaryBytes).
	// Binary data cannot be cut usefully, so the result is refused.
	ReasonBinaryTooLarge = "binary_content_too_large"
	// ReasonStructuredContentInvalid: a tool with an output schema
	// returned structuredContent that does not match it; the error is a
	// *StructuredContentError.
	ReasonStructuredContentInvalid = "structured_content_invalid"
	// ReasonStructuredContentMissing: a tool with an output schema
	// returned a result that is not an error without structuredContent,
	// which the protocol requires.
	ReasonStructuredContentMissing = "structured_content_missing"
)

// StructuredContentError is the error of a result refused because its
// structuredContent does not match the tool's (narrowed) output schema. It
// wraps a *refusal.Error of Class Protocol and Reason
// "structured_content_invalid". Like ArgumentError, neither field's text
// is a value of the result; Path holds property names of the schema.
type StructuredContentError struct {
	// Path is the JSON pointer of the offending value, as in
	// ArgumentError.Path.
	Path string
	// Rule is the rule the value broke, one of the Rule* words.
	Rule string
	// Expected and Got are as in ArgumentError.
	Expected string
	Got      string
	err      *refusal.Error
}

// Error returns the refusal's text (with the rule and what was expected as
// its detail); it leaves out Path.
func (e *StructuredContentError) Error() string { return e.err.Error() }

// Explain returns "<Path>: expected <Expected>, got <Got>", like
// ArgumentError.Explain.
func (e *StructuredContentError) Explain() string { return explain(e.Path, e.Expected, e.Got) }

// Unwrap returns the *refusal.Error.
func (e *StructuredContentError) Unwrap() error { return e.err }

// admit turns what the server returned into the ToolResult the host gets,
// or refuses it (see Tool.Call for the rules).
func admit(t *Tool, res ports.CallResult) (ports.ToolResult, error) {
	refuse := func(reason string) (ports.ToolResult, error) {
		return ports.ToolResult{}, &refusal.Error{Class: refusal.Protocol, Reason: reason, Server: t.srv.id}
	}
	raw, blocks, truncated, reason := admitContent(res.Content, t.cap, t.srv.binCap)
	if reason != "" {
		return refuse(reason)
	}
	out := ports.ToolResult{Content: raw, Blocks: blocks, IsError: res.IsError, Truncated: truncated}
	if sc := bytes.TrimSpace(res.StructuredContent); len(sc) > 0 && !bytes.Equal(sc, []byte("null")) {
		switch {
		case !validJSON(sc):
			return refuse(ReasonMalformedResult)
		case len(sc) > t.cap && utf8.RuneCount(sc) > t.cap:
			// Too large for context: left out (JSON cannot be cut),
			// and so never handed over as valid.
			out.Truncated = true
		case t.output != nil && !res.IsError:
			v, err := t.output.validator()
			if err != nil {
				return ports.ToolResult{}, &refusal.Error{Class: refusal.Internal, Reason: ReasonValidatorUnavailable, Server: t.srv.id}
			}
			if f := checkArgs(sc, v); f != nil {
				want, got := f.expectation()
				return ports.ToolResult{}, &StructuredContentError{Path: f.path(), Rule: f.rule, Expected: want, Got: got, err: &refusal.Error{
					Class: refusal.Protocol, Reason: ReasonStructuredContentInvalid, Server: t.srv.id, Detail: f.rule + ": " + explanation(want, got),
				}}
			}
			out.StructuredContent = sc
		default:
			out.StructuredContent = sc
		}
	} else if t.output != nil && !res.IsError {
		return refuse(ReasonStructuredContentMissing)
	}
	if len(t.srv.metaKeys) > 0 && len(bytes.TrimSpace(res.Meta)) > 0 {
		var m map[string]json.RawMessage
		if json.Unmarshal(res.Meta, &m) != nil {
			return refuse(ReasonMalformedResult)
		}
		for _, k := range t.srv.metaKeys {
			if v, ok := m[k]; ok {
				if out.Meta == nil {
					out.Meta = make(map[string]json.RawMessage, len(t.srv.metaKeys))
				}
				out.Meta[k] = v
			}
		}
	}
	return out, nil
}

// textHead opens a plain text block as most servers write it; such a
// block is read without encoding/json.
const textHead = `{"type":"text","text":`

// admitContent checks that content is a JSON array of content blocks the
// protocol defines, decodes each into a ports.ContentBlock, and cuts the
// result so the characters it puts into context stay within limit:
//
//   - a text block counts the characters (runes) of its text; the one that
//     crosses the limit is cut at a rune boundary (its other members kept),
//     later counted blocks are dropped;
//   - a resource link, and an embedded text resource, count the characters
//     of their JSON and are dropped when they cross the limit;
//   - an image or audio block, and an embedded blob resource, do not count:
//     each is bounded by binLimit bytes (decoded) instead, and kept whole.
//
// It returns the admitted content as JSON (content itself when nothing was
// cut), the blocks, whether anything was cut, and the refusal reason ("" if
// none): ReasonMalformedResult, ReasonUnknownContentType or
// ReasonBinaryTooLarge. Empty content is an empty array.
func admitContent(content json.RawMessage, limit, binLimit int) (json.RawMessage, []ports.ContentBlock, bool, string) {
	content = bytes.TrimSpace(content)
	if len(content) == 0 {
		return json.RawMessage("[]"), nil, false, ""
	}
	if content[0] != '[' || !validJSON(content) {
		return nil, nil, false, ReasonMalformedResult
	}
	fits := len(content) <= limit // characters never exceed bytes
	var (
		blocks    []ports.ContentBlock
		out       []byte // the cut content, once something was cut
		kept      []bool // per block, whether it stays (only when cutting)
		used      int
		truncated bool
		reason    string
		cutAt     = -1 // the index of the text block that was cut
	)
	eachElement(content, func(item []byte) bool {
		if item[0] != '{' {
			reason = ReasonMalformedResult
			return false
		}
		if blocks == nil {
			blocks = make([]ports.ContentBlock, 0, 1)
		}
		b, r := decodeBlock(item, binLimit)
		if r != "" {
			reason = r
			return false
		}
		if fits {
			blocks = append(blocks, b)
			return true
		}
		n := 0
		switch {
		case b.Data != nil:
			blocks = append(blocks, b)
			kept = append(kept, true)
			return true
		case b.Kind == ports.ContentText:
			n = utf8.RuneCountInString(b.Text)
		default:
			n = utf8.RuneCount(item)
		}
		if !truncated && used+n <= limit {
			used += n
			blocks = append(blocks, b)
			kept = append(kept, true)
			return true
		}
		if !truncated {
			truncated = true
			if rest := limit - used; b.Kind == ports.ContentText && rest > 0 {
				b.Text = cutRunes(b.Text, rest)
				cutAt = len(blocks)
				blocks = append(blocks, b)
				kept = append(kept, true)
				used = limit
				return true
			}
		}
		blocks = append(blocks, ports.ContentBlock{}) // a placeholder, removed below
		kept = append(kept, false)
		return true
	})
	if reason != "" {
		return nil, nil, false, reason
	}
	if !truncated {
		return content, blocks, false, ""
	}
	// Rebuild the JSON of what stayed, and drop the placeholders.
	j := 0
	eachElement(content, func(item []byte) bool {
		if kept[j] {
			if j == cutAt {
				cut, err := cutText(item, blocks[j].Text)
				if err != nil {
					j++
					return true // unreachable: item is a valid text block
				}
				item = cut
			}
			out = appendItem(out, item)
		}
		j++
		return true
	})
	w := 0
	for k, b := range blocks {
		if kept[k] {
			blocks[w] = b
			w++
		}
	}
	blocks = slices.Clip(blocks[:w])
	if out == nil {
		return json.RawMessage("[]"), blocks, true, ""
	}
	return append(out, ']'), blocks, true, ""
}

// cutRunes returns the first n runes of s.
func cutRunes(s string, n int) string {
	for k := range s {
		if n == 0 {
			return s[:k]
		}
		n--
	}
	return s
}

func appendItem(out, item []byte) []byte {
	if out == nil {
		out = append(make([]byte, 0, 256), '[')
	} else {
		out = append(out, ',')
	}
	return append(out, item...)
}

// cutText returns the text block item with its "text" replaced by text,
// its other members kept.
func cutText(item []byte, text string) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(item, &m); err != nil {
		return nil, err
	}
	t, err := json.Marshal(text)
	if err != nil {
		return nil, err
	}
	m["text"] = t
	return json.Marshal(m)
}

// wireBlock is a content block as the protocol writes it.
type wireBlock struct {
	Type        *string          `json:"type"`
	Text        *string          `json:"text"`
	Data        *string          `json:"data"`
	MIMEType    string           `json:"mimeType"`
	URI         *string          `json:"uri"`
	Name        string           `json:"name"`
	Title       string           `json:"title"`
	Description string           `json:"description"`
	Size        *int64           `json:"size"`
	Resource    *wireResource    `json:"resource"`
	Annotations *wireAnnotations `json:"annotations"`
}

type wireResource struct {
	URI      *string `json:"uri"`
	MIMEType string  `json:"mimeType"`
	Text     *string `json:"text"`
	Blob     *string `json:"blob"`
}

type wireAnnotations struct {
	Audience     []string `json:"audience"`
	Priority     *float64 `json:"priority"`
	LastModified string   `json:"lastModified"`
}

// decodeBlock decodes one content block (a valid JSON object), or returns
// the reason it is refused. A plain text block ({"type":"text","text":...}
// and nothing else) is read directly; any other through encoding/json.
func decodeBlock(item []byte, binLimit int) (ports.ContentBlock, string) {
	if len(item) > len(textHead)+2 && string(item[:len(textHead)]) == textHead && item[len(textHead)] == '"' &&
		item[len(item)-1] == '}' && stringEnd(item, len(textHead)) == len(item)-1 {
		return ports.ContentBlock{Kind: ports.ContentText, Text: unquote(item[len(textHead)+1 : len(item)-2])}, ""
	}
	var w wireBlock
	if json.Unmarshal(item, &w) != nil || w.Type == nil {
		return ports.ContentBlock{}, ReasonMalformedResult
	}
	b := ports.ContentBlock{Kind: ports.ContentKind(*w.Type), MIMEType: w.MIMEType}
	if a := w.Annotations; a != nil {
		b.Annotations = &ports.ContentAnnotations{Audience: a.Audience, Priority: a.Priority, LastModified: a.LastModified}
	}
	switch b.Kind {
	case ports.ContentText:
		if w.Text == nil {
			return ports.ContentBlock{}, ReasonMalformedResult
		}
		b.Text = *w.Text
		b.MIMEType = ""
	case ports.ContentImage, ports.ContentAudio:
		if w.Data == nil {
			return ports.ContentBlock{}, ReasonMalformedResult
		}
		data, r := decodeBinary(*w.Data, binLimit)
		if r != "" {
			return ports.ContentBlock{}, r
		}
		b.Data = data
	case ports.ContentResourceLink:
		if w.URI == nil {
			return ports.ContentBlock{}, ReasonMalformedResult
		}
		b.URI, b.Name, b.Title, b.Description, b.Size = *w.URI, w.Name, w.Title, w.Description, w.Size
	case ports.ContentResource:
		r := w.Resource
		// Neither text nor blob is an empty text resource: encoders
		// (the go-sdk's among them) leave out an empty "text".
		if r == nil || r.URI == nil || r.Text != nil && r.Blob != nil {
			return ports.ContentBlock{}, ReasonMalformedResult
		}
		b.URI, b.MIMEType = *r.URI, r.MIMEType
		if r.Blob == nil {
			if r.Text != nil {
				b.Text = *r.Text
			}
		} else {
			data, reason := decodeBinary(*r.Blob, binLimit)
			if reason != "" {
				return ports.ContentBlock{}, reason
			}
			b.Data = data
		}
	default:
		return ports.ContentBlock{}, ReasonUnknownContentType
	}
	return b, ""
}

// unquote returns the value of a JSON string literal whose contents
// (between its quotes) are s, as encoding/json decodes it: escapes
// resolved, an invalid UTF-8 byte and a lone surrogate each replaced by
// U+FFFD. s must be the contents of a valid literal (validJSON checked
// it). FuzzUnquote compares it with encoding/json.
func unquote(s []byte) string {
	if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return string(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			switch e := s[i+1]; e {
			case 'u':
				r := hex4(s[i+2 : i+6])
				i += 6
				if utf16.IsSurrogate(r) {
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if d := utf16.DecodeRune(r, hex4(s[i+2:i+6])); d != utf8.RuneError {
							b.WriteRune(d)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				b.WriteRune(r)
				continue
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			default: // '"', '\\', '/'
				b.WriteByte(e)
			}
			i += 2
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.Write(s[i : i+n])
			}
			i += n
		}
	}
	return b.String()
}

// hex4 returns the value of four hex digits.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// decodeBinary decodes base64 data bounded by limit bytes; the size is
// checked before anything is decoded.
func decodeBinary(s string, limit int) ([]byte, string) {
	if base64.StdEncoding.DecodedLen(len(s)) > limit+2 {
		return nil, ReasonBinaryTooLarge
	}
	data, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, ReasonMalformedResult
	}
	if len(data) > limit {
		return nil, ReasonBinaryTooLarge
	}
	if data == nil {
		data = []byte{}
	}
	return data, ""
}
