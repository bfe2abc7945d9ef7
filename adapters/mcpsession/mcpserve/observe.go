package mcpserve

import (
	"context"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Request is what an Observer is told of one request a client sent. It
// holds no argument, URI or header value.
type Request struct {
	// Method is the request's MCP method ("tools/call", "tools/list", ...).
	Method string
	// Target is the tool or prompt name a tools/call or prompts/get
	// names (as the client wrote it), else "".
	Target string
	// Traceparent is the trace context the client sent: params._meta's
	// "traceparent" (SEP-414) when it is a string, else the HTTP
	// request's traceparent header, else "". It is the client's claim,
	// not validated here.
	Traceparent string
}

// Outcome is how an observed request ended.
type Outcome struct {
	// Err is the error the client is answered with, nil on success.
	Err error
	// ToolError reports a tools/call whose result is a tool error
	// (isError).
	ToolError bool
	// ProtocolVersion is the version an initialize that succeeded
	// negotiated, else "".
	ProtocolVersion string
	// SessionWait, set only for an initialize that succeeded, blocks
	// until the session it opened ends (the client deleted it or hung up,
	// its stdio or stream ended, its idle timeout passed). A stateless
	// request (protocol 2026-07-28 and later) sends no initialize, so it
	// never has one. nil otherwise.
	SessionWait func()
}

// Observer is told of every request a client sends (notifications are
// not requests) before it is handled: it returns the context the request
// is handled under and a function called once with its Outcome. It is
// called concurrently for different requests and must not block.
type Observer func(ctx context.Context, r Request) (context.Context, func(Outcome))

// observe is the receiving middleware calling o.
func observe(o Observer) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "notifications/") {
				return next(ctx, method, req)
			}
			r := Request{Method: method}
			params := req.GetParams()
			switch p := params.(type) {
			case *mcp.CallToolParamsRaw:
				if p != nil {
					r.Target = p.Name
				}
			case *mcp.GetPromptParams:
				if p != nil {
					r.Target = p.Name
				}
			}
			if params != nil && !reflectNil(params) {
				if tp, ok := params.GetMeta()["traceparent"].(string); ok {
					r.Traceparent = tp
				}
			}
			if r.Traceparent == "" {
				if x := req.GetExtra(); x != nil && x.Header != nil {
					r.Traceparent = x.Header.Get("Traceparent")
				}
			}
			ctx, done := o(ctx, r)
			res, err := next(ctx, method, req)
			out := Outcome{Err: err}
			if ctr, ok := res.(*mcp.CallToolResult); ok && ctr != nil && err == nil {
				out.ToolError = ctr.IsError
			}
			if ir, ok := res.(*mcp.InitializeResult); ok && ir != nil && err == nil {
				out.ProtocolVersion = ir.ProtocolVersion
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
					out.SessionWait = func() { _ = ss.Wait() }
				}
			}
			done(out)
			return res, err
		}
	}
}

// reflectNil reports whether v is a nil pointer (a typed nil in an
// interface).
func reflectNil(v any) bool {
	r := reflect.ValueOf(v)
	return r.Kind() == reflect.Pointer && r.IsNil()
}
