package catalog

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/mcpward/mcpward/core/jsontext"
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
	// binCap is the binary limit of every tool (Options.MaxBinaryBytes).
	binCap int
	// metaKeys are the result _meta keys passed through
	// (Options.ResultMetaKeys).
	metaKeys []string
	// st holds the records, strings and schemas of the catalog's tools.
	st *toolStore
}

// Tool is one discovered tool as the host sees it: a ports.Tool whose Call
// validates the arguments against the narrowed schema, calls the server's
// tool through the catalog's Caller and cuts the result to the admission
// cap. Only Build makes Tools; a Tool is immutable and safe for concurrent
// use.
type Tool struct {
	srv *toolServer
	// output is the narrowed outputSchema and its validator, nil when
	// the tool has none (or one Build could not use).
	output *schemaEntry
	cap    int
	i      uint32 // the index of the tool's record in srv.st
}

func (t *Tool) rec() *toolRec { return &t.srv.st.recs[t.i] }

// Spec returns the tool's description for the model: the host-facing
// name, the server's description and the narrowed input schema.
// InputSchema and OutputSchema may be shared with other calls of Spec and
// must not be modified. Spec is safe for concurrent use; it may allocate,
// as the catalog keeps schemas packed (see schemaStore).
//
// Title and Annotations are the server's (Annotations a new copy);
// OutputSchema is the narrowed outputSchema, nil when the tool has none or
// Build could not use it (see Build). ServerInputSchema is the inputSchema
// as the server wrote it (see ports.ToolSpec), nil when it is nested
// deeper than a JSON value may be (128 levels; a Diagnostic
// "input_schema_too_deep" says so).
func (t *Tool) Spec() ports.ToolSpec {
	st, r := t.srv.st, t.rec()
	s := ports.ToolSpec{Name: st.get(r.host), Description: st.get(r.desc), InputSchema: st.sch.json(r.schema), Title: st.get(r.title)}
	if r.written != noSchema {
		s.ServerInputSchema = st.sch.json(r.written)
	}
	if r.ann {
		a := &ports.ToolAnnotations{Title: st.get(r.annTitle)}
		for b, h := range [...]**bool{&a.ReadOnlyHint, &a.DestructiveHint, &a.IdempotentHint, &a.OpenWorldHint} {
			if v := r.hints >> (2 * b) & 3; v != hintUnset {
				x := v == hintTrue
				*h = &x
			}
		}
		s.Annotations = a
	}
	if t.output != nil {
		s.OutputSchema = t.output.json()
	}
	return s
}

// HostName returns the host-facing name (ToolName of the server and the
// tool's own name).
func (t *Tool) HostName() string { return t.srv.st.get(t.rec().host) }

// NameOnServer returns the tool's own name, as the server listed it
// (HostName is the name a model sees); calls go to the server under this
// name.
func (t *Tool) NameOnServer() string { return t.srv.st.get(t.rec().name) }

// ServerName returns NameOnServer: the tool's name on the server, not the
// server's name.
//
// Deprecated: use NameOnServer, whose name says which name it is.
func (t *Tool) ServerName() string { return t.NameOnServer() }

// Narrowed returns the JSON pointers of the input schema's subschemas that
// narrowing replaced by an accepts-anything node ("/" for the root's own
// keywords), in schema order; nil when nothing was narrowed.
func (t *Tool) Narrowed() []string { return t.srv.st.strings(t.rec().narrowed) }

// ResultCap returns the admission cap of this tool: the most characters a
// result may put into model context.
func (t *Tool) ResultCap() int { return t.cap }

// BinaryCap returns the most bytes one binary block (image, audio or
// embedded blob) of this tool's results may hold, decoded.
func (t *Tool) BinaryCap() int { return t.srv.binCap }

// OutputNarrowed returns the JSON pointers of the output schema's
// subschemas that narrowing replaced, like Narrowed; nil when nothing was
// narrowed or the tool has no output schema.
func (t *Tool) OutputNarrowed() []string { return t.srv.st.strings(t.rec().outNarrowed) }

// inputValidator returns the compiled validator of the narrowed input
// schema (see schemaStore.validator).
func (t *Tool) inputValidator() (*vnode, error) {
	return t.srv.st.sch.validator(t.rec().schema)
}

// schemaID is the index of the tool's input schema in its catalog; tools
// of one catalog with byte-identical narrowed schemas have the same.
func (t *Tool) schemaID() uint32 { return t.rec().schema }

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
	// Expected says what the value at Path should have been: a type
	// ("number", "string or null"), a bound ("a number >= 1", "at most 10
	// characters"), "one of the 3 allowed values", ... Built from the
	// rule and the schema (type names, numeric bounds), never from the
	// value.
	Expected string
	// Got is the type the value had ("string", "non-integer number"),
	// set for Rule "type" (and "required": "none") only; it is never the
	// value itself.
	Got string
	err *refusal.Error
}

// Error returns the refusal's text, whose Detail is the path, the rule
// and what was expected ("/a: type: expected number, got string"; no path
// for the arguments themselves). The path's property names are the
// server's: in Detail they are escaped under core/textsafe's rule and cut
// to MaxDetailPath bytes, so the text is safe to print and log as is. It
// never holds an argument value or a name the arguments chose.
func (e *ArgumentError) Error() string { return e.err.Error() }

// Explain returns "<Path>: expected <Expected>, got <Got>" (", got" only
// when Got is set), e.g. "/a: expected number, got string". The path's
// property names are the server's: a host sanitizes the text before it
// shows it on a terminal. It never holds an argument value.
func (e *ArgumentError) Explain() string { return explain(e.Path, e.Expected, e.Got) }

// Unwrap returns the *refusal.Error.
func (e *ArgumentError) Unwrap() error { return e.err }

// Call validates args (nil or empty means {}) against the narrowed input
// schema and, when they match, calls the server's tool by its server name
// with them, passing ports.Traceparent(ctx) along; it never retries.
//
// Arguments that do not match, or are not a JSON object, are refused
// before anything leaves the process with an *ArgumentError (Class Config,
// Reason "invalid_arguments"), which says what was expected. The Caller's
// error is returned unchanged. A catalog built without a Caller refuses
// every call with Class Internal, Reason "no_caller". When the Caller
// knows the server's current catalog (see CatalogSource), a tool that
// changed or vanished since t's catalog was built is refused first, with
// Class Config, Reason "tool_changed" or "tool_removed", and nothing is
// validated or sent.
//
// The result is then admitted (a *refusal.Error of Class Protocol when it
// is not; the tool stays usable for the next call):
//
//   - Content must be a JSON array of content blocks of the five types the
//     protocol defines (empty content is an empty array), else Reason
//     "malformed_result", or "unknown_content_type" for a block of any
//     other type: the protocol's list is closed, so such a result is
//     refused rather than handed over with a block nobody can read.
//   - Content is cut to the tool's ResultCap characters: a text block
//     counts the characters of its text, a resource link or embedded text
//     resource those of its JSON; the text block that crosses the cap is
//     cut at a character boundary (its other members kept), later counted
//     blocks are dropped, and Truncated is set. An image, audio or
//     embedded blob block does not count: each is bounded by BinaryCap
//     bytes (decoded) instead, and kept whole; a larger one refuses the
//     result, Reason "binary_content_too_large". ToolResult.Content is the
//     admitted JSON (the server's bytes when nothing was cut) and
//     ToolResult.Blocks the same blocks, typed.
//   - StructuredContent must be valid JSON ("malformed_result"). One
//     longer than ResultCap characters is left out, Truncated set. When
//     the tool has an output schema and the result is not an error, it
//     must be present ("structured_content_missing") and match the
//     narrowed schema, else a *StructuredContentError (Reason
//     "structured_content_invalid") refuses the result; an error result's,
//     or one of a tool without an output schema, is handed over unchecked.
//   - Of _meta only the keys of Options.ResultMetaKeys pass (none by
//     default).
//
// IsError is passed through.
func (t *Tool) Call(ctx context.Context, args json.RawMessage) (_ ports.ToolResult, err error) {
	if t.srv.caller != nil {
		if t, err = t.current(); err != nil {
			return ports.ToolResult{}, err
		}
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	v, err := t.inputValidator()
	if err != nil {
		return ports.ToolResult{}, &refusal.Error{Class: refusal.Internal, Reason: ReasonValidatorUnavailable, Server: t.srv.id}
	}
	f := checkArgs(args, v)
	if f != nil {
		want, got := f.expectation()
		return ports.ToolResult{}, &ArgumentError{Path: f.path(), Rule: f.rule, Expected: want, Got: got, err: &refusal.Error{
			Class: refusal.Config, Reason: ReasonInvalidArguments, Server: t.srv.id, Detail: pathDetail(f.path(), f.rule+": "+explanation(want, got)),
		}}
	}
	if t.srv.caller == nil {
		return ports.ToolResult{}, &refusal.Error{Class: refusal.Internal, Reason: ReasonNoCaller, Server: t.srv.id}
	}
	res, err := t.srv.caller.Call(ctx, ports.CallRequest{Name: t.NameOnServer(), Arguments: args, Traceparent: ports.Traceparent(ctx)})
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
	return admitResult(t, res)
}

// eachElement calls f with each element of the valid JSON array a, until
// f returns false; it reports whether f always returned true.
func eachElement(a []byte, f func(item []byte) bool) bool {
	i := 1 // past '['
	for {
		i = jsontext.SkipSpace(a, i)
		if a[i] == ']' {
			return true
		}
		start := i
		i = jsontext.SkipValue(a, i)
		if !f(a[start:i]) {
			return false
		}
		i = jsontext.SkipSpace(a, i)
		if a[i] == ',' {
			i++
		}
	}
}
