package mcpsession

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Conn is one admitted, constructed transport for one target, with the
// hooks mcpsession needs from the transport adapter that built it. The
// composition root builds it (from adapters/httptransport or
// adapters/stdiotransport); mcpsession never imports another adapter.
type Conn struct {
	// Transport is connected exactly once by the session. Its connection
	// is wrapped for the session's own request path (rawrequest.go), so
	// its Write must be safe for concurrent use, as mcp.Connection
	// requires; the SDK's *mcp.StreamableClientTransport is left unwrapped
	// (every request then goes the SDK's way).
	Transport mcp.Transport
	// Origin is "scheme://host:port" of an HTTP server, "" for stdio; it is
	// the only location an error may name.
	Origin string
	// Classify maps an error the SDK returned for this connection to a
	// typed, secret-free refusal (for HTTP, httptransport.Classify). nil
	// means mcpsession's own origin-only mapping.
	Classify func(err error) *refusal.Error
	// ClassifyConnect, when non-nil, maps an error of the initialize
	// handshake in place of Classify (which still maps every later error),
	// for a transport whose failures mean something else before the
	// session is up: a stdio child that exits before it completes
	// initialize is misconfigured (not retried), one that exits later has
	// crashed (retried). Same contract as Classify.
	ClassifyConnect func(err error) *refusal.Error
	// Abort ends the connection at once: called when an in-flight call is
	// abandoned (ctx cancelled or timed out), because the SDK cannot cancel
	// a call cleanly. For stdio it kills the child. nil means Close the
	// session. mcpsession runs it at most once per session (also when
	// Connect's ctx ends during the handshake, and when Close has not
	// finished within Options.CloseTimeout); it must not block and must be
	// safe to call before the transport has started. A transport whose
	// abandoned requests need not end the session (Streamable HTTP, where
	// the SDK cancels the request's own POST and sends
	// notifications/cancelled) may set a no-op Abort to keep it.
	Abort func()
	// Trace returns the context under which the call carrying the host's
	// trusted traceparent tp is made (for HTTP, httptransport.WithTraceparent).
	// nil means the transport carries no trace context (stdio).
	Trace func(ctx context.Context, tp string) (context.Context, error)
	// TraceMeta, when true with Trace set, also puts a call's traceparent
	// (once Trace accepted it) into that tools/call's params._meta under
	// "traceparent" (SEP-414), the carrier the OpenTelemetry MCP
	// conventions name. Set it only where the transport sends the
	// traceparent itself (for HTTP, an origin in TraceOrigins): the _meta
	// key then follows the same rule, the one call it belongs to.
	TraceMeta bool
	// WithTool, when non-nil, returns the context under which a tools/call
	// of tool is made, for a transport that writes headers from the called
	// tool's schema (for HTTP, httptransport.WithTool: the Mcp-Param-*
	// headers of protocol 2026-07-28). The session passes the tool as its
	// last listing gave it, and only a tool whose inputSchema carries an
	// x-mcp-header annotation. nil means the transport needs no tool.
	WithTool func(ctx context.Context, tool *mcp.Tool) context.Context
	// Release frees what the transport holds after the session ended (for
	// HTTP, closing idle connections). May be nil.
	Release func()
	// InboundFilter, when non-nil, installs the session's inbound gate on
	// the transport before it connects: the transport must then call admit
	// with the method of every request and notification the server sends,
	// before the SDK sees it, and drop the message when admit returns false
	// (responses are never filtered). The gate coalesces list changes and
	// progress and drops what the session ignores, so a flood of
	// notifications cannot grow the SDK's handler queue without bound. nil
	// means the transport cannot filter, and the SDK queues whatever
	// arrives (stdiotransport.Transport.SetInboundFilter and
	// httptransport.Transport.SetInboundFilter filter).
	InboundFilter func(admit func(method string, call bool) bool)
	// Mask, when non-nil, returns a server's own error message with every
	// value the host knows to be the definition's (env and header values,
	// say) replaced by a marker. It runs before mcpsession's own masking
	// (argument values, literal credential shapes) and escaping, and only
	// on the message of a JSON-RPC error reply to a tools/call,
	// prompts/get or resources/read, which a refusal's Detail keeps. It
	// must be safe for concurrent use.
	Mask func(msg string) string
}

// Dialer admits and constructs the transport for a target. It returns a
// *refusal.Error when admission refuses (egress, process authority,
// authentication that cannot be performed).
type Dialer interface {
	Dial(ctx context.Context, t ports.Target) (*Conn, error)
}

// DialerFunc adapts a function to a Dialer.
type DialerFunc func(ctx context.Context, t ports.Target) (*Conn, error)

// Dial calls f.
func (f DialerFunc) Dial(ctx context.Context, t ports.Target) (*Conn, error) { return f(ctx, t) }
