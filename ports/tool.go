package ports

import (
	"context"
	"encoding/json"
)

// ToolSpec is what a host's model sees of a tool.
type ToolSpec struct {
	// Name is the host-facing name, valid for model APIs.
	Name        string
	Description string
	// InputSchema is the (narrowed) JSON Schema of the arguments: what
	// Tool.Call validates them against.
	InputSchema json.RawMessage
	// ServerInputSchema is the inputSchema as the server wrote it: every
	// keyword kept (JSON Schema 2020-12's $schema, $defs, $anchor,
	// composition and conditionals, vendor keywords), as compact JSON with
	// sorted keys and numbers as a float64 writes them; nil when it is
	// nested too deep to be kept (128 levels). A $ref in it is never
	// resolved by mcpward (a network one never fetched), and a host that
	// resolves one itself decides what it fetches. Bounded by discovery's
	// byte bound like the whole listing. Shared and read-only.
	ServerInputSchema json.RawMessage
	// Title is the server's human-readable title of the tool ("" when
	// none); server data, to be sanitized before display.
	Title string
	// Annotations are the server's hints about the tool, nil when it gave
	// none. They are untrusted claims, never a grant: see ToolAnnotations.
	Annotations *ToolAnnotations
	// OutputSchema is the (narrowed) JSON Schema a result's
	// StructuredContent matches, nil when the tool declared none or
	// declared one that could not be used.
	OutputSchema json.RawMessage
}

// ToolResult is what a tool call puts into the host's context.
type ToolResult struct {
	// Content is the result content (raw MCP content array), already cut to
	// the admission cap: the same blocks as Blocks, as JSON.
	Content json.RawMessage
	// Blocks are the result's content blocks, typed, in the server's
	// order, cut like Content.
	Blocks []ContentBlock
	// StructuredContent is the result's structuredContent (valid JSON; an
	// object when it was checked), nil when it had none. When the tool's
	// Spec has an OutputSchema and IsError is false, it matched that
	// (narrowed) schema (a mismatch is a refusal, never a ToolResult);
	// otherwise it is the server's value, unchecked.
	StructuredContent json.RawMessage
	// Meta holds the members of the result's _meta whose keys the host
	// asked to pass through; nil by default, since the protocol defines no
	// result _meta key a host needs.
	Meta    map[string]json.RawMessage
	IsError bool
	// Truncated reports that the admission cap cut the content (or left
	// out a StructuredContent larger than the cap).
	Truncated bool
}

// Tool is the host's generic tool slot: every discovered MCP tool enters the
// host as a Tool, and there is no MCP-only runtime path. Safe for concurrent
// use.
type Tool interface {
	// Spec describes the tool.
	Spec() ToolSpec
	// Call validates args against the narrowed schema, then calls the tool.
	// Invalid arguments are a *refusal.Error of Class Config naming the
	// JSON path, returned before anything leaves the process. A result
	// the server sent that cannot be handed over (a content block of an
	// unknown type, a binary block over its limit, structured content
	// that does not match the output schema) is a *refusal.Error of
	// Class Protocol; the tool stays usable.
	//
	// Aborting a call (ctx ends, or a call timeout passes, before the
	// result arrives) of a stdio server ends that server's process: a
	// stdio request cannot be cancelled cleanly, so its connection is
	// closed and the child is stopped (stdin closed, then SIGTERM, then
	// SIGKILL of its process group). The aborted call returns a Transient
	// refusal and is never replayed. What the host sees next: the other
	// calls in flight on that process fail with a Transient refusal too;
	// the supervisor starts a new process at once (no backoff sleep, not
	// counted as a disconnect) and, until it is ready, calls fail with
	// Class Transient, Reason "server_unavailable" without reaching the server;
	// afterwards calls go to the new process (whatever state the old one
	// held is gone). Over HTTP an aborted call leaves the session up.
	//
	// The call asks the server for progress only when ctx carries a
	// callback from WithProgress: then the server gets a progress token,
	// its notifications reach the callback, and each one restarts the
	// call timeout's window. Without it no token is sent and the call
	// timeout bounds the whole call.
	Call(ctx context.Context, args json.RawMessage) (ToolResult, error)
}

type traceparentKey struct{}

// WithTraceparent returns a context carrying the host's trusted W3C
// traceparent for the one tool call made with it through Tool.Call. The
// tool passes it on as CallRequest.Traceparent; the transport decides from
// each request whether it may carry it. Use a fresh context per call.
func WithTraceparent(ctx context.Context, tp string) context.Context {
	return context.WithValue(ctx, traceparentKey{}, tp)
}

// Traceparent returns the traceparent WithTraceparent put into ctx, or "".
func Traceparent(ctx context.Context) string {
	tp, _ := ctx.Value(traceparentKey{}).(string)
	return tp
}

type progressKey struct{}

// WithProgress returns a context carrying f, the host's progress callback
// for the one tool call made with it through Tool.Call (whose signature
// has no room for it): the supervisor reports the call's progress to f as
// it would to CallRequest.OnProgress. It is how a host asks for progress:
// only a call whose ctx carries a non-nil f sends the server a progress
// token, and only such a call has its timeout window restarted by the
// server's progress (a host that wants long jobs kept alive but not their
// progress passes a callback that does nothing). Use a fresh context per
// call.
func WithProgress(ctx context.Context, f func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

// ProgressFunc returns the callback WithProgress put into ctx, or nil.
func ProgressFunc(ctx context.Context) func(Progress) {
	f, _ := ctx.Value(progressKey{}).(func(Progress))
	return f
}
