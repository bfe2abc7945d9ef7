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
	// InputSchema is the (narrowed) JSON Schema of the arguments.
	InputSchema json.RawMessage
}

// ToolResult is what a tool call puts into the host's context.
type ToolResult struct {
	// Content is the result content (raw MCP content array), already cut to
	// the admission cap.
	Content json.RawMessage
	IsError bool
	// Truncated reports that the admission cap cut the content.
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
	// JSON path, returned before anything leaves the process.
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
	// Class Transient, Reason "not_connected" without reaching the server;
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
