package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

var _ ports.Tool = (*Tool)(nil)

// Refusal reasons of Tool.Call.
const (
	// ReasonInvalidArguments (Class Config): the arguments do not match
	// the narrowed schema; the error is an *ArgumentError.
	ReasonInvalidArguments = "invalid_arguments"
	// ReasonMalformedResult (Class Protocol): the result's content is not
	// a JSON array of objects.
	ReasonMalformedResult = "malformed_result"
	// ReasonNoCaller (Class Internal): the catalog was built without a
	// Caller.
	ReasonNoCaller = "no_caller"
	// ReasonValidatorUnavailable (Class Internal): the narrowed schema
	// could not be compiled (a bug in mcpward).
	ReasonValidatorUnavailable = "validator_unavailable"
	// ReasonPanic (Class Internal): checking or cutting the result the
	// server returned panicked (a bug in mcpward); the panic is recovered
	// at Call's boundary, like the supervisor's own (same word).
	ReasonPanic = "panic"
)

// admitResult is admit; a test replaces it to panic.
var admitResult = admit

// toolServer is what the tools of one catalog share.
type toolServer struct {
	id     string
	caller Caller
	// cap and readCap are the admission caps of prompt results
	// (characters) and resource reads (bytes).
	cap, readCap int
}

// Tool is one discovered tool as the host sees it: a ports.Tool whose Call
// validates the arguments against the narrowed schema, calls the server's
// tool through the catalog's Caller and cuts the result to the admission
// cap. Only Build makes Tools; a Tool is immutable and safe for concurrent
// use.
type Tool struct {
	host     string // host-facing name
	name     string // the server's own name
	desc     string
	schema   *schemaEntry // narrowed inputSchema and its validator
	narrowed []string
	srv      *toolServer
	cap      int
}

// Spec returns the tool's description for the model: the host-facing
// name, the server's description and the narrowed input schema.
// InputSchema may be shared with other calls of Spec and must not be
// modified. Spec is safe for concurrent use; it may allocate, as the
// catalog keeps schemas packed (see schemaEntry).
func (t *Tool) Spec() ports.ToolSpec {
	return ports.ToolSpec{Name: t.host, Description: t.desc, InputSchema: t.schema.json()}
}

// HostName returns the host-facing name (ToolName of the server and the
// tool's own name).
func (t *Tool) HostName() string { return t.host }

// ServerName returns the tool's name as the server listed it; calls go to
// the server under this name.
func (t *Tool) ServerName() string { return t.name }

// Narrowed returns the JSON pointers of the input schema's subschemas that
// narrowing replaced by an accepts-anything node ("/" for the root's own
// keywords), in schema order; nil when nothing was narrowed.
func (t *Tool) Narrowed() []string { return slices.Clone(t.narrowed) }

// ResultCap returns the admission cap of this tool: the most characters a
// result may put into model context.
func (t *Tool) ResultCap() int { return t.cap }

// ArgumentError is the error of a call refused because its arguments do
// not match the narrowed input schema. It wraps a *refusal.Error of Class
// Config and Reason "invalid_arguments" (errors.As and refusal.ClassOf see
// it). Neither field ever holds an argument value.
type ArgumentError struct {
	// Path is the JSON pointer of the offending value in the arguments,
	// built only from property names the schema declares and array
	// indices ("/" for the arguments themselves). For an unexpected
	// property, or an additional property that fails its schema, it is
	// the path of the object holding it, so a name the arguments chose is
	// never echoed.
	Path string
	// Rule is the rule the value broke, one of the Rule* words.
	Rule string
	err  *refusal.Error
}

// Error returns the refusal's text (with the rule as its detail); it
// leaves out Path, whose property names come from the server.
func (e *ArgumentError) Error() string { return e.err.Error() }

// Unwrap returns the *refusal.Error.
func (e *ArgumentError) Unwrap() error { return e.err }

// Call validates args (nil or empty means {}) against the narrowed input
// schema and, when they match, calls the server's tool by its server name
// with them, passing ports.Traceparent(ctx) along; it never retries.
//
// Arguments that do not match, or are not a JSON object, are refused
// before anything leaves the process with an *ArgumentError (Class Config,
// Reason "invalid_arguments"). The Caller's error is returned unchanged.
// A result whose content is not a JSON array of objects is a
// *refusal.Error of Class Protocol, Reason "malformed_result" (empty
// content is an empty array). Otherwise IsError is passed through and the
// content is cut to the tool's ResultCap characters: a text item counts
// the characters of its "text", any other item those of its JSON; the text
// item that crosses the cap is cut at a character boundary (its other
// members kept), later items are dropped, and Truncated is set. A catalog
// built without a Caller refuses every call with Class Internal, Reason
// "no_caller". When the Caller knows the server's current catalog (see
// CatalogSource), a tool that changed or vanished since t's catalog was
// built is refused first, with Class Config, Reason "tool_changed" or
// "tool_removed", and nothing is validated or sent.
func (t *Tool) Call(ctx context.Context, args json.RawMessage) (_ ports.ToolResult, err error) {
	if t.srv.caller != nil {
		if t, err = t.current(); err != nil {
			return ports.ToolResult{}, err
		}
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	v, err := t.schema.validator()
	if err != nil {
		return ports.ToolResult{}, &refusal.Error{Class: refusal.Internal, Reason: ReasonValidatorUnavailable, Server: t.srv.id}
	}
	f := checkArgs(args, v)
	if f != nil {
		return ports.ToolResult{}, &ArgumentError{Path: f.path(), Rule: f.rule, err: &refusal.Error{
			Class: refusal.Config, Reason: ReasonInvalidArguments, Server: t.srv.id, Detail: f.rule,
		}}
	}
	if t.srv.caller == nil {
		return ports.ToolResult{}, &refusal.Error{Class: refusal.Internal, Reason: ReasonNoCaller, Server: t.srv.id}
	}
	res, err := t.srv.caller.Call(ctx, ports.CallRequest{Name: t.name, Arguments: args, Traceparent: ports.Traceparent(ctx)})
	if err != nil {
		return ports.ToolResult{}, err
	}
	// The result's bytes are the server's: checking and cutting them runs
	// after the caller (the supervisor's panic boundary) returned, so it
	// has a boundary of its own. FuzzAdmit feeds admit any bytes.
	defer func() {
		if v := recover(); v != nil {
			err = &refusal.Error{Class: refusal.Internal, Reason: ReasonPanic, Server: t.srv.id,
				Detail: "a panic was recovered while checking the result"}
		}
	}()
	content, truncated, ok := admitResult(res.Content, t.cap)
	if !ok {
		return ports.ToolResult{}, &refusal.Error{Class: refusal.Protocol, Reason: ReasonMalformedResult, Server: t.srv.id}
	}
	return ports.ToolResult{Content: content, IsError: res.IsError, Truncated: truncated}, nil
}

// admit checks that content is a JSON array of objects and cuts it so the
// characters it puts into context stay within limit: a text item counts
// the characters (runes) of its "text", any other item the characters of
// its JSON. The text item that crosses the limit is cut at a rune
// boundary, later items are dropped. Empty content is an empty array.
func admit(content json.RawMessage, limit int) (json.RawMessage, bool, bool) {
	content = bytes.TrimSpace(content)
	if len(content) == 0 {
		return json.RawMessage("[]"), false, true
	}
	if content[0] != '[' || !validJSON(content) {
		return nil, false, false
	}
	fits := len(content) <= limit // characters never exceed bytes
	var out []byte
	used, truncated := 0, false
	ok := eachElement(content, func(item []byte) bool {
		if item[0] != '{' {
			return false
		}
		if fits {
			return true
		}
		if truncated {
			return true // keep checking the shape
		}
		var head struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		_ = json.Unmarshal(item, &head) // valid JSON; a mistyped field only leaves head empty
		isText := head.Type == "text" && head.Text != nil
		n := 0
		if isText {
			n = utf8.RuneCountInString(*head.Text)
		} else {
			n = utf8.RuneCount(item)
		}
		if used+n <= limit {
			out = appendItem(out, item)
			used += n
			return true
		}
		truncated = true
		if rest := limit - used; isText && rest > 0 {
			if cut, err := cutText(item, *head.Text, rest); err == nil {
				out = appendItem(out, cut)
			}
		}
		return true
	})
	if !ok {
		return nil, false, false
	}
	if fits {
		return content, false, true
	}
	if out == nil {
		return json.RawMessage("[]"), truncated, true
	}
	return append(out, ']'), truncated, true
}

func appendItem(out, item []byte) []byte {
	if out == nil {
		out = append(make([]byte, 0, 256), '[')
	} else {
		out = append(out, ',')
	}
	return append(out, item...)
}

// cutText returns the text item with its text cut to its first n runes,
// its other members kept.
func cutText(item []byte, text string, n int) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(item, &m); err != nil {
		return nil, err
	}
	for k := range text {
		if n == 0 {
			text = text[:k]
			break
		}
		n--
	}
	t, err := json.Marshal(text)
	if err != nil {
		return nil, err
	}
	m["text"] = t
	return json.Marshal(m)
}

// eachElement calls f with each element of the valid JSON array a, until
// f returns false; it reports whether f always returned true.
func eachElement(a []byte, f func(item []byte) bool) bool {
	i := 1 // past '['
	for {
		i = skipSpace(a, i)
		if a[i] == ']' {
			return true
		}
		start := i
		i = skipValue(a, i)
		if !f(a[start:i]) {
			return false
		}
		i = skipSpace(a, i)
		if a[i] == ',' {
			i++
		}
	}
}

func skipSpace(a []byte, i int) int {
	for i < len(a) && (a[i] == ' ' || a[i] == '\t' || a[i] == '\n' || a[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the valid JSON value starting at a[i].
func skipValue(a []byte, i int) int {
	depth, inString := 0, false
	for ; i < len(a); i++ {
		c := a[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
				if depth == 0 {
					return i + 1
				}
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
		case ']', '}':
			if depth == 0 {
				return i // end of a scalar before the array's close
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}
