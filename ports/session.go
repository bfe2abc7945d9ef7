package ports

import (
	"context"
	"encoding/json"
	"time"
)

// TransportKind is one of the two transports mcpward constructs.
type TransportKind string

// The transports. Deprecated HTTP+SSE and WebSocket are refusals by name in
// package core/definition, never a TransportKind.
const (
	TransportHTTP  TransportKind = "http"
	TransportStdio TransportKind = "stdio"
)

// Target is a materialized, admitted definition ready to connect. Its
// values may hold secrets: a Target is never logged or printed.
type Target struct {
	ServerID string
	Kind     TransportKind
	// Provenance of the definition, passed on to the ProcessAuthority so
	// it decides on the same identity activation approved.
	Tier        Tier
	Origin      string
	Fingerprint string
	// HTTP: the admitted URL and static headers.
	URL     string
	Headers map[string]string
	// Stdio: the exact program, arguments, definition env and cwd.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
}

// ListKind names one of the catalog lists of MCP.
type ListKind string

// The list kinds.
const (
	ListTools             ListKind = "tools"
	ListPrompts           ListKind = "prompts"
	ListResources         ListKind = "resources"
	ListResourceTemplates ListKind = "resourceTemplates"
)

// SessionIdentity is what a retained catalog is bound to, plus the declared
// capabilities that gate discovery.
type SessionIdentity struct {
	ServerID        string
	ProtocolVersion string
	ServerName      string
	ServerVersion   string
	// Declared lists the list kinds whose capability the server declared;
	// a list method of any other kind is never called.
	Declared []ListKind
	// Subscribe reports that the server declared resources.subscribe;
	// Session.Subscribe is refused without it.
	Subscribe bool
	// Completions reports that the server declared completions;
	// Session.Complete is refused without it.
	Completions bool
}

// Page is one page of a list result and the next cursor ("" when pagination
// ended).
type Page struct {
	// Items are the raw JSON items of a prompts, resources or
	// resourceTemplates page. A tools page leaves it nil.
	Items []json.RawMessage
	// Tools are the items of a tools page, in the server's order.
	Tools []ToolItem
	// Dropped names the tools of this page the client library excluded
	// before mcpward could see them whole (for example an invalid
	// x-mcp-header annotation), so they are reported as rejected rather
	// than silently missing.
	Dropped []DroppedTool
	// NextCursor is the cursor of the next page, "" when the list ended.
	NextCursor string
	// Cache is the server's caching hint for this page (protocol
	// 2026-07-28 and later), nil when the session's protocol has none.
	Cache *CacheHint
}

// MaxCacheTTL bounds a CacheHint's TTL: a server's ttlMs above it (years,
// say) is cut to it, whatever a host's own refresh bound.
const MaxCacheTTL = 24 * time.Hour

// CacheHint is a server's caching hint on a list result (MCP 2026-07-28:
// ttlMs and cacheScope), bounded by the session that read it.
type CacheHint struct {
	// TTL is how long the result may be considered fresh after it was
	// received: the server's ttlMs within [0, MaxCacheTTL]. 0 means stale
	// at once (also when the server gave no ttlMs).
	TTL time.Duration
	// Private reports a result meant for this user only: cacheScope
	// "private", and any value other than "public" (absent included),
	// since a wrong "public" could share one user's list with another.
	Private bool
	// Bounded reports that the server's ttlMs was cut: negative (taken
	// as 0) or above MaxCacheTTL.
	Bounded bool
}

// ToolItem is one tool as the server listed it.
type ToolItem struct {
	Name        string
	Title       string
	Description string
	// InputSchema is the server's inputSchema as encoding/json decodes a
	// JSON value into an any (map[string]any, []any, string, float64,
	// bool or nil), or a json.RawMessage holding that JSON value as the
	// server sent it. It is shared and read-only: nobody modifies it.
	//
	// For a json.RawMessage, core/catalog produces exactly what it
	// produces for the value encoding/json's Unmarshal decodes from those
	// bytes into an any: every ToolSpec field, narrowed paths,
	// diagnostics, rejections with their reasons and the discovery byte
	// bound's accounting. So duplicate member names count as the last
	// one, escapes in names and strings are decoded ("\u0074ype" is
	// "type"), invalid UTF-8 becomes U+FFFD, numbers are float64s (written
	// back as encoding/json writes a float64), and null is nil. Bytes
	// Unmarshal refuses (not one JSON value, a number out of float64's
	// range, nesting past encoding/json's limit) are an invalid schema: an
	// inputSchema is rejected as one that is not a JSON object, an
	// outputSchema is reported invalid as one that is not an object, and
	// the byte bound counts their length. One exception, past any default
	// bound: a decoded value whose JSON passes core/catalog's
	// MaxSchemaBytes (64 MiB, twice Discover's default byte bound) is
	// refused there as an invalid schema, while the same schema as raw
	// bytes is bounded by the discovery byte bound alone (it differs only
	// for a host that raises that bound past MaxSchemaBytes).
	InputSchema any
	// Meta is the tool's _meta object decoded the same way, or nil.
	Meta map[string]any
	// OutputSchema is the server's outputSchema decoded like InputSchema
	// (or a json.RawMessage, as InputSchema), nil when the tool declared
	// none; a json.RawMessage of length 0, or holding null, is none too.
	// Shared and read-only.
	OutputSchema any
	// Annotations are the tool's annotations, nil when it had none.
	Annotations *ToolAnnotations
}

// DroppedTool is a tool the client library excluded from a page.
type DroppedTool struct {
	// Name is the tool's name as listed ("" when it had none).
	Name string
	// Reason is a stable lower_snake_case word, e.g. "invalid_header_annotation".
	Reason string
}

// CallRequest is one tool call.
type CallRequest struct {
	Name      string
	Arguments json.RawMessage
	// Traceparent is the host's trusted W3C traceparent for this call only,
	// or "".
	Traceparent string
	// OnProgress, when non-nil, asks the server for progress on this call:
	// the session sends a progress token unique within the session in the
	// request's _meta and calls OnProgress with every progress
	// notification carrying that token. It is called from the session's
	// notification goroutine, one notification at a time, never after
	// Session.Call has returned; it must not block (it holds up every
	// notification of the session) and must not call the session. A
	// notification with any other token is dropped. nil sends no progress
	// token, so a server has nothing to report progress against. (The
	// supervisor sets it only when its own caller asked for progress.)
	OnProgress func(Progress)
}

// Progress is one progress notification of a call, as the server sent it.
// Every field is server data: Message is the server's text, unchanged
// except that the session bounds its length (see MaxProgressMessage), so a
// host sanitizes it before showing it on a terminal.
type Progress struct {
	// Progress is the progress so far; it should grow with every
	// notification, even when Total is unknown (servers do not always
	// keep to that).
	Progress float64
	// Total is the total progress required, 0 when unknown.
	Total float64
	// Message describes the current progress, "" when none.
	Message string
}

// MaxProgressMessage bounds the length in bytes of Progress.Message: a
// session cuts a longer message at a UTF-8 character boundary at or below
// it.
const MaxProgressMessage = 1024

// CallResult is a tool call's result, kept as raw JSON.
type CallResult struct {
	Content           json.RawMessage
	StructuredContent json.RawMessage
	Meta              json.RawMessage
	IsError           bool
}

// Signals are the only way a server reaches mcpward uninvited: a list
// changed, or (when asked for) a log message. No notification ever
// becomes a session turn.
type Signals struct {
	// ListChanged is called (from the session's notification goroutine;
	// it must not block) when the server says a list changed.
	ListChanged func(kind ListKind)
	// Log, when non-nil, asks for the server's log messages: a server that
	// declares the logging capability is asked for them (at the
	// connector's level) and each notifications/message it sends is
	// passed to Log (from the session's notification goroutine; it must
	// not block). Nil means they are neither asked for nor read.
	Log func(LogMessage)
	// ResourceUpdated is called (from the session's notification
	// goroutine; it must not block) with the URI of a
	// notifications/resources/updated for a URI the session subscribed
	// to and has not unsubscribed from. Updates for any other URI are
	// dropped.
	ResourceUpdated func(uri string)
}

// Connector connects admitted targets. Safe for concurrent use.
type Connector interface {
	// Connect opens a session. Failures are *refusal.Error values of every
	// Class; a server that negotiates an unsupported protocol version is
	// closed and refused with Class Protocol.
	Connect(ctx context.Context, t Target, s Signals) (Session, error)
}

// Session is one live MCP client session. Safe for concurrent use; Close
// ends every in-flight call.
type Session interface {
	// Identity returns the negotiated identity.
	Identity() SessionIdentity
	// List fetches one page of kind from cursor ("" for the first page).
	// An undeclared kind returns a *refusal.Error of Class Unsupported
	// without contacting the server.
	List(ctx context.Context, kind ListKind, cursor string) (Page, error)
	// Call makes one tool call; it is never replayed. Cancelling ctx
	// abandons the call (over stdio, by closing the child).
	Call(ctx context.Context, r CallRequest) (CallResult, error)
	// Done is closed when the session has ended, by Close or because the
	// connection was lost (the server went away, a stdio child exited or
	// was killed after an abandoned call).
	Done() <-chan struct{}
	// Close ends the session and everything it started, within a bound.
	Close() error

	// GetPrompt makes one prompts/get request. A server that did not
	// declare prompts is refused with Class Unsupported without contact.
	GetPrompt(ctx context.Context, r GetPromptRequest) (PromptResult, error)
	// ReadResource makes one resources/read request. A server that did
	// not declare resources is refused with Class Unsupported without
	// contact.
	ReadResource(ctx context.Context, r ReadRequest) (ReadResult, error)
	// Subscribe asks for notifications/resources/updated of uri (see
	// Signals.ResourceUpdated); Unsubscribe stops them. A server that did
	// not declare resources.subscribe is refused with Class Unsupported
	// without contact.
	Subscribe(ctx context.Context, uri string) error
	Unsubscribe(ctx context.Context, uri string) error
	// Complete makes one completion/complete request. A server that did
	// not declare completions is refused with Class Unsupported without
	// contact.
	Complete(ctx context.Context, r CompleteRequest) (Completion, error)
}
