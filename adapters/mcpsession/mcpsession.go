// Package mcpsession is mcpward's MCP client session: the official go-sdk
// client (github.com/modelcontextprotocol/go-sdk v1.8.0) behind the
// ports.Connector / ports.Session seam.
//
// What it does for every session, whatever transport the Dialer built:
//
//   - Both protocol eras (see era.go). A session asks for the modern era
//     first (server/discover at ModernProtocolVersion) and falls back to
//     the legacy initialize handshake when the server does not speak it;
//     Options.AcceptVersions narrows the versions accepted and can pin one
//     era (ModernVersions, LegacyVersions). The SDK accepts any version it
//     knows, so the negotiated version is checked here against the
//     accepted ones; anything else closes the session and is refused with
//     Class Protocol, Reason "protocol_version_refused". A server that
//     mixes the eras (a modern version through initialize, a
//     server-to-client request on a modern session) is refused by name
//     ("protocol_era_mismatch"), and a handshake result over the bounds
//     ("discover_over_caps").
//   - Nothing advertised unless the host provides it. By default the
//     client declares no capability (no roots, sampling or elicitation)
//     and refuses every server-to-client request but ping (the SDK alone
//     would answer roots/list with an empty list). A host that gives an
//     Elicitor (Options.Elicitor) or Roots (Options.Roots) for a server
//     gets that capability declared to it, and only to it: elicitation
//     requests are validated (a flat form of primitive fields, https URLs
//     only, bounded sizes, one question at a time) before the host is
//     asked, its answer is checked against the form before it is sent, and
//     every refusal is answered to the server by name (see the
//     ReasonElicit constants); roots/list answers the host's file roots and
//     a change of them sends notifications/roots/list_changed. Sampling is
//     never declared and always refused. On a modern session the same
//     ports answer the input requests of a multi round-trip result
//     (mrtr.go): each round is a new request carrying the server's request
//     state unchanged, rounds are bounded, and a legacy session never
//     re-sends anything (a tool call is sent exactly once and never
//     replayed). There is no keep-alive.
//   - Capability-gated lists. A list kind whose capability the server did not
//     declare is refused (Class Unsupported, Reason "list_undeclared") without
//     contacting the server. Tools the SDK would drop silently (an invalid
//     x-mcp-header annotation, a null entry) come back in Page.Dropped. On
//     a modern session a page carries the server's caching hints
//     (Page.Cache, bounded: cache.go); the SDK's own list and read cache is
//     never used, so every List and ReadResource reaches the server.
//   - Signals only. Tool, prompt and resource list_changed notifications call
//     Signals.ListChanged and do nothing else; a progress notification
//     carrying the progress token of a call in flight that asked for it
//     (ports.CallRequest.OnProgress) is passed to that call's OnProgress,
//     its message cut to ports.MaxProgressMessage bytes; a resource
//     updated notification of a URI the session subscribed to calls
//     Signals.ResourceUpdated; when the host passes Signals.Log and the
//     server declares the logging capability, the session asks for its
//     log messages (logging/setLevel at Options.LogLevel) and passes each
//     notifications/message to Signals.Log, bounded (see
//     ports.LogMessage); every other notification (progress for any other
//     token, ...) is ignored. Over a transport with Conn.InboundFilter, a
//     flood is coalesced before the SDK queues it: at most one notification
//     per method waits for the handler (a progress notification that
//     arrives while another waits is dropped), at most eight requests per
//     method (each answered), and ignored methods are dropped (see
//     Conn.InboundFilter).
//   - Abandonment. A request whose ctx ends while it is in flight is
//     abandoned: the SDK cannot cancel it cleanly, so the connection is
//     aborted (Conn.Abort, for stdio a kill of the direct child) or, without
//     an Abort hook, the session is closed.
//   - Secret-free errors. Every failure is a *refusal.Error naming at most
//     the server id and the Conn's origin; SDK error text (which embeds URLs,
//     server messages and process output) is never copied.
//   - Tool results without the SDK's decoding. A tools/call goes on a
//     request path of the session's own beside the SDK's, on the same
//     connection (rawrequest.go: an id the SDK never uses, its response
//     taken off the connection before the SDK reads on), with the params
//     and _meta the SDK would send. A result in the shape ordinary servers
//     write is passed on as its own bytes (callresult.go); any other is
//     decoded with the SDK's types and handled as before, so the outcome
//     is the same either way. Over the SDK's own Streamable HTTP client
//     transport every request stays on the SDK's path.
//
// # Session errors
//
// Besides the Conn's Classify mapping, a Session's List and Call return
// these refusals (server id and origin stamped):
//
//	Class        Reason               when
//	Unsupported  list_undeclared      List of a kind the server did not declare (nothing sent)
//	Config       list_kind_unknown    List of a kind that is not a list kind
//	Config       arguments_invalid    Call arguments that are not one JSON object (nothing sent)
//	Config       traceparent_refused  the Trace hook failed without a refusal (nothing sent)
//	Transient    canceled             ctx was cancelled before the request was sent
//	Transient    deadline_exceeded    ctx's deadline had passed before the request was sent
//	Transient    call_abandoned       ctx ended while the call was in flight (connection aborted)
//	Transient    list_abandoned       ctx ended while the page request was in flight (likewise)
//	Transient    session_closed       Close had started, or ended the request in flight
//	Transient    connection_closed    the peer went away (EOF, closed pipe, SDK connection closed)
//	Transient    transport_rejected   the transport refused the request (network, 429, 5xx)
//	Transient    network_error        a network failure the Classify hook did not map
//	Transient    session_missing      the HTTP server no longer knows the session (404 with its id)
//	Protocol     call_rejected        a JSON-RPC error reply to tools/call (Detail names the code)
//	Protocol     list_rejected        a JSON-RPC error reply to a list request
//	Protocol     call_input_required  an "input required" result of a legacy session (nothing
//	                                  is re-sent), or one whose input requests contradict it
//	Protocol     input_rounds_exceeded a modern server asked for input more than MaxInputRounds
//	                                  times (mrtr.go; likewise for GetPrompt, ReadResource)
//	Protocol     too_many_input_requests, request_state_too_large: a round over its bounds
//	Unsupported  input_unavailable    an input request the host gave no port for (its kind in
//	                                  Detail); sampling_refused for sampling, always
//	Refused      an elicitation refusal's reason (elicit.go) for a refused input elicitation
//	Protocol     malformed_message    the server sent something that is not JSON-RPC (not JSON,
//	                                  not JSON-RPC 2.0, a reply neither JSON nor SSE)
//	Protocol     malformed_reply      a reply that does not decode as the request's result
//	Protocol     unknown_content_type a tools/call result with a content block of a type the
//	                                  protocol does not define (the SDK refuses the whole result)
//
// GetPrompt, ReadResource, Subscribe, Unsubscribe and Complete return the
// same transport and context refusals (Transient "request_abandoned" when
// ctx ended in flight), and:
//
//	Class        Reason                  when
//	Unsupported  capability_undeclared   the server did not declare prompts, resources,
//	                                     resources.subscribe or completions (nothing sent)
//	Protocol     prompt_rejected         a JSON-RPC error reply to prompts/get (an unknown
//	                                     prompt, invalid arguments; the session stays usable)
//	Protocol     read_rejected           likewise to resources/read
//	Protocol     subscribe_rejected      likewise to resources/subscribe or unsubscribe
//	Protocol     complete_rejected       likewise to completion/complete
//	Protocol     input_required          an "input required" result of a legacy session
//	                                     (a modern session runs the rounds: mrtr.go)
//	Refused      too_many_subscriptions  a Subscribe past MaxSessionSubscriptions (nothing sent)
//	Config       completion_ref_invalid  a completion reference neither ref/prompt nor
//	                                     ref/resource (nothing sent)
//
// Close returns nil, or Class Transient "close_timeout" when the session
// had not closed within twice Options.CloseTimeout (the Abort hook ran in
// between).
//
// mcpsession never imports another adapter: the composition root builds a
// Conn from adapters/httptransport or adapters/stdiotransport.
package mcpsession

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Client identity and protocol defaults.
const (
	// DefaultClientName is the clientInfo.name sent in initialize when
	// Options.ClientName is empty.
	DefaultClientName = "mcpward"
	// ClientVersion is mcpward's version, the clientInfo.version sent in
	// initialize when Options.ClientVersion is empty.
	ClientVersion = "0.1.0"
	// PinnedProtocolVersion is the legacy protocol version an initialize
	// request asks for when the host accepts the modern era too (the
	// SDK's fallback after server/discover); a host that accepts only
	// legacy versions is asked for the newest of them.
	PinnedProtocolVersion = "2025-11-25"
	// DefaultCloseTimeout bounds Session.Close when Options.CloseTimeout is
	// zero.
	DefaultCloseTimeout = 3 * time.Second
)

// Options configures a Connector. The zero value (or a nil *Options) means
// every default.
type Options struct {
	// ClientName is sent as clientInfo.name; "" means DefaultClientName.
	ClientName string
	// ClientVersion is sent as clientInfo.version; "" means ClientVersion.
	ClientVersion string
	// AcceptVersions are the negotiated protocol versions a session
	// accepts; nil means DefaultAcceptVersions (both eras, modern first).
	// A version the SDK does not speak (mcp.SupportedProtocolVersions) is
	// ignored. A list without a modern version never probes with
	// server/discover (LegacyVersions pins the legacy era); one without a
	// legacy version never sends initialize (ModernVersions pins the
	// modern era). A non-nil list that keeps no version refuses every
	// server before dialling it.
	AcceptVersions []string
	// CloseTimeout bounds Session.Close: when the SDK has not closed the
	// session within it, the Conn's Abort hook runs, and Close waits once
	// more for as long; 0 means DefaultCloseTimeout.
	CloseTimeout time.Duration
	// LogLevel is the level a session asks a server for with
	// logging/setLevel when the host wants its log messages
	// (ports.Signals.Log) and it declared the logging capability; ""
	// means DefaultLogLevel (info).
	LogLevel ports.LogLevel
	// Elicitor, when non-nil, returns the host's Elicitor for a server
	// id; a session declares the elicitation capability (form and url)
	// only when it returns one, and otherwise refuses elicitation/create
	// as it refuses every server request (see elicit.go's reasons for
	// what a session refuses before the host is asked).
	Elicitor func(serverID string) ports.Elicitor
	// ElicitTimeout bounds the wait for the host's answer to one
	// elicitation; 0 means DefaultElicitTimeout.
	ElicitTimeout time.Duration
	// OnElicitRefused, when non-nil, is told about every elicitation the
	// session refused of a server that has an Elicitor (a ReasonElicit
	// refusal with the server id; never server text): called from the
	// SDK's request goroutine, it must not block. Refusals the Elicitor
	// itself returned are not reported.
	OnElicitRefused func(*refusal.Error)
	// Roots, when non-nil, returns the host's Roots for a server id; a
	// session declares the roots capability (listChanged) only when it
	// returns one.
	Roots func(serverID string) ports.Roots
}

// Connector is the go-sdk implementation of ports.Connector. It is safe for
// concurrent use; every Connect builds its own SDK client and session.
type Connector struct {
	dialer       Dialer
	impl         mcp.Implementation
	accept       []string
	ask          string
	closeTimeout time.Duration
	logLevel     ports.LogLevel
	hostOpts     Options
	// sdkCalls, set by tests only, keeps every request on the SDK's path
	// (no rawrequest.go path), to hold the two paths to the same outcome.
	sdkCalls bool
}

var _ ports.Connector = (*Connector)(nil)

// New returns a Connector that admits and constructs each target's
// transport with d and runs an MCP client session over it. d must not be
// nil; opts may be nil.
func New(d Dialer, opts *Options) *Connector {
	if d == nil {
		panic("mcpsession: nil Dialer")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	c := &Connector{
		dialer:       d,
		impl:         mcp.Implementation{Name: o.ClientName, Version: o.ClientVersion},
		closeTimeout: o.CloseTimeout,
		logLevel:     o.LogLevel,
		hostOpts:     Options{Elicitor: o.Elicitor, ElicitTimeout: o.ElicitTimeout, OnElicitRefused: o.OnElicitRefused, Roots: o.Roots},
	}
	if c.impl.Name == "" {
		c.impl.Name = DefaultClientName
	}
	if c.impl.Version == "" {
		c.impl.Version = ClientVersion
	}
	if c.closeTimeout <= 0 {
		c.closeTimeout = DefaultCloseTimeout
	}
	accept := o.AcceptVersions
	if accept == nil {
		accept = DefaultAcceptVersions()
	}
	known := mcp.SupportedProtocolVersions()
	for _, v := range accept {
		if slices.Contains(known, v) && !slices.Contains(c.accept, v) {
			c.accept = append(c.accept, v)
		}
	}
	c.ask = askVersion(c.accept)
	return c
}

// refuseServerRequests refuses every server-to-client request but ping.
// The SDK already refuses sampling and elicitation when no handler is set,
// but answers roots/list (with an empty list) whatever the client
// advertised; mcpward advertises no capability and answers none.
func refuseServerRequests(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "ping" || strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not supported by this client"}
	}
}

// Connect dials t with the Connector's Dialer, connects an MCP client
// session over the resulting transport (server/discover first when the
// host accepts the modern era, else initialize at the newest accepted
// legacy version; see era.go) and checks the negotiated version.
//
// Errors are *refusal.Error values carrying t.ServerID and at most the
// Conn's origin:
//   - the Dialer's refusal, as returned (its Server filled in when empty;
//     an error that is not a refusal becomes Class Internal, Reason
//     "dial_failed");
//   - Class Protocol, Reason "protocol_version_refused" when the server
//     negotiated a version outside AcceptVersions (the session is closed
//     first), refused every version asked for, or speaks only an era the
//     host did not accept (with no version accepted at all, nothing is
//     dialled);
//   - Class Protocol, Reason "protocol_era_mismatch" when the server
//     negotiated a modern version through initialize, and
//     "discover_over_caps" for a handshake result over the bounds of
//     era.go;
//   - Class Transient, Reason "canceled" or "deadline_exceeded" when ctx
//     ended before the session was up (the Conn's Abort hook runs if the
//     handshake was in flight);
//   - otherwise the Conn's ClassifyConnect (or Classify) mapping, or
//     mcpsession's own (Class Protocol "initialize_rejected" for a JSON-RPC
//     error reply, Protocol "malformed_message" for a reply that is not
//     JSON-RPC, Transient "connection_closed" when the peer went away,
//     Config "spawn_failed" when a process could not start, Transient
//     "connect_failed" else).
//
// s.ListChanged (which must not block) is called from the SDK's
// notification goroutine for each list_changed notification of a declared
// kind that arrives after Connect has returned and before Close:
// tools/list_changed signals ListTools, prompts/list_changed ListPrompts,
// and resources/list_changed both ListResources and ListResourceTemplates
// (MCP has no notification of its own for templates, which belong to the
// resources capability). An earlier notification is not signalled: the
// first listing, which follows Connect, sees its change. Nothing else a
// server sends is signalled. The returned Session must be closed.
func (c *Connector) Connect(ctx context.Context, t ports.Target, s ports.Signals) (ports.Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxRefusal(err, t.ServerID, "")
	}
	if c.ask == "" {
		return nil, &refusal.Error{Class: refusal.Protocol, Reason: ReasonVersionRefused, Server: t.ServerID, Detail: "no protocol version accepted"}
	}
	conn, err := c.dialer.Dial(ctx, t)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && refusalOf(err) == nil {
			return nil, ctxRefusal(cerr, t.ServerID, "")
		}
		return nil, dialRefusal(err, t.ServerID)
	}
	if conn == nil || conn.Transport == nil {
		return nil, &refusal.Error{Class: refusal.Internal, Reason: "dial_failed", Server: t.ServerID, Detail: "dialer returned no transport"}
	}

	sess := newSession(t.ServerID, conn, s, c.closeTimeout)
	sess.accept = c.accept
	for _, v := range c.accept {
		if Modern(v) {
			sess.hs.modernOK = true
		} else {
			sess.hs.legacyOK = true
		}
	}
	c.hostPortsFor(sess)
	client := mcp.NewClient(&mcp.Implementation{Name: c.impl.Name, Version: c.impl.Version}, &mcp.ClientOptions{
		Logger:                      slog.New(sess.drops),
		Capabilities:                sess.host.capabilities(),
		ToolListChangedHandler:      func(context.Context, *mcp.ToolListChangedRequest) { sess.signal(ports.ListTools) },
		PromptListChangedHandler:    func(context.Context, *mcp.PromptListChangedRequest) { sess.signal(ports.ListPrompts) },
		ResourceListChangedHandler:  func(context.Context, *mcp.ResourceListChangedRequest) { sess.signalResources() },
		ProgressNotificationHandler: sess.progress.handler,
		LoggingMessageHandler:       sess.logMessage,
		ResourceUpdatedHandler:      sess.resourceUpdated,
		MultiRoundTrip:              &mcp.MultiRoundTripOptions{Disabled: true},
	})
	client.AddReceivingMiddleware(sess.hostRequests, refuseServerRequests)
	client.AddSendingMiddleware(sess.guardHandshake, sess.logLevelMeta, takeCacheHints, takeTools, sess.captureMeta, injectPage)
	transport := conn.Transport
	if !c.sdkCalls {
		transport, sess.raw = wrapTransport(transport)
	}
	sess.gate = newInboundGate()
	sess.gate.install(client, conn)
	if sess.host.roots.provider != nil {
		sess.host.roots.prime(ctx, client)
	}

	// While the handshake is in flight, an ended ctx aborts the connection:
	// the SDK's own cleanup of a stdio child that never answers takes
	// seconds (it closes stdin and waits before signalling).
	stopAbort := context.AfterFunc(ctx, sess.abort)
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: c.ask})
	aborted := !stopAbort()
	if err != nil {
		defer sess.release()
		if cerr := ctx.Err(); cerr != nil && (aborted || isCtxErr(err)) {
			return nil, ctxRefusal(cerr, t.ServerID, conn.Origin)
		}
		if cause := sess.hs.transportCause(); cause != nil {
			return nil, sess.classify(cause, opConnect)
		}
		if re := sess.hs.failure(); re != nil {
			return nil, sess.stamp(re)
		}
		if isUnsupportedVersion(err) {
			return nil, sess.refuse(refusal.Protocol, ReasonVersionRefused, "")
		}
		return nil, sess.classify(err, opConnect)
	}
	sess.start(cs)
	if sess.host.roots.provider != nil {
		sess.watchRoots(client)
	}
	if aborted {
		_ = sess.Close()
		return nil, ctxRefusal(ctx.Err(), t.ServerID, conn.Origin)
	}

	res := cs.InitializeResult()
	if res == nil || !slices.Contains(c.accept, res.ProtocolVersion) {
		_ = sess.Close()
		return nil, sess.refuse(refusal.Protocol, ReasonVersionRefused, "")
	}
	sess.modern.Store(Modern(res.ProtocolVersion))
	sess.setIdentity(res)
	if err := sess.startLogs(ctx, res, c.logLevel); err != nil {
		_ = sess.Close()
		return nil, ctxRefusal(err, t.ServerID, conn.Origin)
	}
	return sess, nil
}
