package ports

import (
	"context"
	"encoding/json"
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
}

// Page is one page of a list result: raw JSON items and the next cursor
// ("" when pagination ended).
type Page struct {
	Items      []json.RawMessage
	NextCursor string
}

// CallRequest is one tool call.
type CallRequest struct {
	Name      string
	Arguments json.RawMessage
	// Traceparent is the host's trusted W3C traceparent for this call only,
	// or "".
	Traceparent string
}

// CallResult is a tool call's result, kept as raw JSON.
type CallResult struct {
	Content           json.RawMessage
	StructuredContent json.RawMessage
	Meta              json.RawMessage
	IsError           bool
}

// Signals are the only way a server reaches mcpward uninvited: a list
// changed. No notification ever becomes a session turn.
type Signals struct {
	// ListChanged is called (from the session's notification goroutine;
	// it must not block) when the server says a list changed.
	ListChanged func(kind ListKind)
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
	// Close ends the session and everything it started, within a bound.
	Close() error
}
