package mcpsession

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/core/jsontext"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// session is one live client session. It implements ports.Session.
type session struct {
	server       string
	conn         *Conn
	sig          ports.Signals
	closeTimeout time.Duration
	drops        *dropLog
	// gate is the inbound gate of the session's transport (nil before
	// Connect installs it); logs is set once the session asked for the
	// server's log messages (logs.go).
	gate *inboundGate
	logs atomic.Bool
	// logLevel is the level a modern session asks for in every request's
	// _meta once it asked for log messages (a string; logs.go).
	logLevel atomic.Value

	// accept are the versions the host accepts and hs what the handshake
	// guard learnt (era.go); modern is set once the session is known to
	// speak the modern era (before Connect returns).
	accept []string
	hs     handshake
	modern atomic.Bool
	// headerTools holds, by name, the listed tools whose inputSchema has
	// an x-mcp-header annotation, for Conn.WithTool.
	headerTools sync.Map

	// Set once by start and setIdentity, before the session is shared.
	cs       *mcp.ClientSession
	identity ports.SessionIdentity
	declared [4]bool // indexed by kindIndex
	// ready is set once identity and declared are final; notifications
	// that arrive earlier are not signalled (the first listing, which
	// follows Connect, sees their change anyway).
	ready atomic.Bool

	// ctx ends when Close starts; every request runs under a context
	// joined with it, so Close retires in-flight requests at once instead
	// of waiting for them (the SDK's Close waits for outgoing calls).
	ctx    context.Context
	cancel context.CancelFunc
	closed atomic.Bool
	// done is closed when the SDK session has ended for any reason.
	done chan struct{}
	// waited is closed when the goroutine watching the SDK session ends.
	waited chan struct{}

	// toolsMu serializes tools/list, so the dropped tools the SDK logs
	// during one ListTools belong to that page.
	toolsMu sync.Mutex

	// calls are the tools/call requests in flight (calljoin.go).
	calls callSet

	// raw is the session's own request path beside the SDK's
	// (rawrequest.go); nil when the transport's connection must reach the
	// SDK unwrapped.
	raw *rawPath

	// progress routes notifications/progress to calls with OnProgress.
	progress progressRoutes
	// subs are the subscribed resource URIs.
	subs subscriptions

	// host holds the host's ports served to the server (elicit.go).
	host hostPorts

	abortOnce sync.Once
	closeOnce sync.Once
	closeErr  error
	released  sync.Once
}

var _ ports.Session = (*session)(nil)

func newSession(server string, conn *Conn, sig ports.Signals, closeTimeout time.Duration) *session {
	ctx, cancel := context.WithCancel(context.Background())
	return &session{
		server:       server,
		conn:         conn,
		sig:          sig,
		closeTimeout: closeTimeout,
		drops:        &dropLog{},
		ctx:          ctx,
		cancel:       cancel,
		done:         make(chan struct{}),
		waited:       make(chan struct{}),
	}
}

// start binds the connected SDK session and watches for its end.
func (s *session) start(cs *mcp.ClientSession) {
	s.cs = cs
	go func() {
		defer close(s.waited)
		_ = cs.Wait()
		close(s.done)
	}()
}

func (s *session) setIdentity(res *mcp.InitializeResult) {
	s.identity = ports.SessionIdentity{ServerID: s.server, ProtocolVersion: res.ProtocolVersion}
	if res.ServerInfo != nil {
		s.identity.ServerName = res.ServerInfo.Name
		s.identity.ServerVersion = res.ServerInfo.Version
	}
	if caps := res.Capabilities; caps != nil {
		if caps.Tools != nil {
			s.declare(ports.ListTools)
		}
		if caps.Prompts != nil {
			s.declare(ports.ListPrompts)
		}
		if caps.Resources != nil {
			s.declare(ports.ListResources)
			s.declare(ports.ListResourceTemplates)
			s.identity.Subscribe = caps.Resources.Subscribe
		}
		s.identity.Completions = caps.Completions != nil
	}
	s.ready.Store(true)
}

func (s *session) declare(k ports.ListKind) {
	s.declared[kindIndex(k)] = true
	s.identity.Declared = append(s.identity.Declared, k)
}

// kindIndex maps the four list kinds to 0..3 and anything else to -1.
func kindIndex(k ports.ListKind) int {
	switch k {
	case ports.ListTools:
		return 0
	case ports.ListPrompts:
		return 1
	case ports.ListResources:
		return 2
	case ports.ListResourceTemplates:
		return 3
	}
	return -1
}

func (s *session) declares(k ports.ListKind) bool {
	i := kindIndex(k)
	return i >= 0 && s.declared[i]
}

// Identity returns the negotiated identity. Declared is a fresh copy, in
// the order tools, prompts, resources, resourceTemplates; ServerName and
// ServerVersion are "" when the server sent no serverInfo. Safe for
// concurrent use.
func (s *session) Identity() ports.SessionIdentity {
	id := s.identity
	id.Declared = append([]ports.ListKind(nil), s.identity.Declared...)
	return id
}

// Done is closed when the SDK session has ended: after Close, or when the
// connection was lost (the server went away, the stdio child exited or was
// aborted).
func (s *session) Done() <-chan struct{} { return s.done }

// signal reports a list_changed notification of a declared kind. It runs
// on the SDK's notification path, so it only calls the host's callback,
// which must not block.
func (s *session) signal(k ports.ListKind) {
	if s.sig.ListChanged == nil || !s.ready.Load() || s.closed.Load() || !s.declares(k) {
		return
	}
	s.sig.ListChanged(k)
}

// signalResources reports notifications/resources/list_changed. MCP has no
// notification of its own for resource templates, which belong to the same
// capability, so both lists are reported as changed.
func (s *session) signalResources() {
	s.signal(ports.ListResources)
	s.signal(ports.ListResourceTemplates)
}

// join returns a context that ends when ctx does or when Close starts.
//
// A ctx that can never end (Done returns nil: Background, or values over
// it) needs no merging: the call runs under s.ctx's cancellation with
// ctx's values, with no allocation beyond the wrapper and no registration
// on s.ctx.
func (s *session) join(ctx context.Context) (context.Context, func()) {
	if ctx.Done() == nil {
		return sessionBound{Context: ctx, s: s.ctx}, func() {}
	}
	c, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.ctx, cancel)
	return c, func() {
		stop()
		cancel()
	}
}

// sessionBound is a context with the values of Context (which never ends)
// and the cancellation of s, the session's own context.
type sessionBound struct {
	context.Context
	s context.Context
}

// Done is the session context's Done.
func (b sessionBound) Done() <-chan struct{} { return b.s.Done() }

// Err is the session context's Err.
func (b sessionBound) Err() error { return b.s.Err() }

// Deadline is the session context's deadline (it has none).
func (b sessionBound) Deadline() (time.Time, bool) { return b.s.Deadline() }

// AfterFunc arranges for f to run when the session context ends. A context
// derived from b (context.WithCancel and the like) uses it rather than a
// goroutine of its own to follow b's cancellation.
func (b sessionBound) AfterFunc(f func()) func() bool { return context.AfterFunc(b.s, f) }

// List fetches one page of kind from cursor.
//
// Errors (all *refusal.Error with the server id and the Conn's origin):
//   - Class Config, Reason "list_kind_unknown" for a kind that is none of
//     the four list kinds;
//   - Class Unsupported, Reason "list_undeclared" for a kind the server did
//     not declare, without contacting the server;
//   - Class Transient, Reason "session_closed" once Close has started;
//   - Class Transient, Reason "canceled" / "deadline_exceeded" when ctx had
//     ended before the request was sent;
//   - Class Transient, Reason "list_abandoned" when ctx ended while the
//     request was in flight: the connection is aborted (Conn.Abort) or, with
//     no Abort hook, the session is closed;
//   - the Conn's Classify mapping or mcpsession's own (Protocol
//     "list_rejected" for a JSON-RPC error reply, Protocol "malformed_reply"
//     for a reply that does not decode, Transient "connection_closed").
//
// A tools page carries Tools (the SDK's decoded input schema and _meta
// maps, shared and read-only) and Dropped (tools the SDK excluded: Reason
// "invalid_header_annotation" or "null_tool"); other kinds carry Items, the
// JSON of each item. Safe for concurrent use; tools pages of one session
// are fetched one at a time.
func (s *session) List(ctx context.Context, kind ports.ListKind, cursor string) (ports.Page, error) {
	if kindIndex(kind) < 0 {
		return ports.Page{}, s.refuse(refusal.Config, "list_kind_unknown", "")
	}
	if !s.declares(kind) {
		return ports.Page{}, s.refuse(refusal.Unsupported, "list_undeclared", string(kind))
	}
	if err := s.usable(ctx); err != nil {
		return ports.Page{}, err
	}
	jctx, stop := s.join(ctx)
	defer stop()

	var page ports.Page
	var err error
	var take *cacheTake
	if s.modern.Load() {
		take = &cacheTake{}
		jctx = context.WithValue(jctx, cacheTakeKey{}, take)
	}
	switch kind {
	case ports.ListTools:
		page, err = s.listTools(jctx, cursor)
	case ports.ListPrompts:
		var res *mcp.ListPromptsResult
		if res, err = guarded(s.cs.ListPrompts)(jctx, &mcp.ListPromptsParams{Cursor: cursor}); err == nil {
			page.NextCursor = res.NextCursor
			page.Items, err = rawItems(res.Prompts)
		}
	case ports.ListResources:
		var res *mcp.ListResourcesResult
		if res, err = guarded(s.cs.ListResources)(jctx, &mcp.ListResourcesParams{Cursor: cursor}); err == nil {
			page.NextCursor = res.NextCursor
			page.Items, err = rawItems(res.Resources)
		}
	case ports.ListResourceTemplates:
		var res *mcp.ListResourceTemplatesResult
		if res, err = guarded(s.cs.ListResourceTemplates)(jctx, &mcp.ListResourceTemplatesParams{Cursor: cursor}); err == nil {
			page.NextCursor = res.NextCursor
			page.Items, err = rawItems(res.ResourceTemplates)
		}
	}
	if err != nil {
		return ports.Page{}, s.failure(ctx, err, opList)
	}
	if take != nil {
		page.Cache = take.hint()
	}
	return page, nil
}

func (s *session) listTools(ctx context.Context, cursor string) (ports.Page, error) {
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	page, left, ok, err := s.listToolsRaw(ctx, cursor)
	if ok {
		return page, err
	}
	if left != nil {
		ctx = context.WithValue(ctx, pageInjectKey{}, left) // listraw.go
	}
	s.drops.reset()
	var take toolsTake
	ctx = context.WithValue(ctx, toolsTakeKey{}, &take) // listtools.go
	res, err := guarded(s.cs.ListTools)(ctx, &mcp.ListToolsParams{Cursor: cursor})
	dropped := s.drops.take()
	if err != nil {
		return ports.Page{}, err
	}
	listed := res.Tools
	if take.taken {
		listed = take.tools
	} else {
		var unreadable []ports.DroppedTool
		listed, unreadable = unreadableHeaders(listed)
		dropped = append(dropped, unreadable...)
		if s.conn.WithTool != nil {
			for _, t := range listed {
				if t != nil && !headerFree([]*mcp.Tool{t}) {
					s.headerTools.Store(t.Name, t)
				}
			}
		}
	}
	tools := make([]ports.ToolItem, len(listed))
	for i, t := range listed {
		tools[i] = toolItem(t)
	}
	return ports.Page{Tools: tools, Dropped: dropped, NextCursor: res.NextCursor}, nil
}

// rawItems encodes each listed item as JSON.
func rawItems[T any](items []*T) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, len(items))
	for _, it := range items {
		if it == nil {
			out = append(out, json.RawMessage("null"))
			continue
		}
		b, err := json.Marshal(it)
		if err != nil {
			return nil, errMalformed
		}
		out = append(out, b)
	}
	return out, nil
}

// Call makes one tool call, sent exactly once. Arguments go on the wire as
// given (empty means {}); when r.Traceparent is set and the Conn has a Trace
// hook, the call runs under the context Trace returns, and with
// Conn.TraceMeta its params._meta carries "traceparent" too.
//
// Errors (all *refusal.Error with the server id and the Conn's origin):
//   - Class Transient, Reason "session_closed" once Close has started (also
//     when Close ends the call while it is in flight);
//   - Class Transient, Reason "canceled" / "deadline_exceeded" when ctx had
//     ended before the call was sent;
//   - Class Transient, Reason "call_abandoned" when ctx ended while the call
//     was in flight: the connection is aborted (Conn.Abort, for stdio a kill
//     of the direct child) or, with no Abort hook, the session is closed;
//   - Trace's refusal, or Class Config, Reason "traceparent_refused";
//   - the Conn's Classify mapping or mcpsession's own (Protocol
//     "call_rejected" for a JSON-RPC error reply — never its message —,
//     Protocol "malformed_reply" for a result that does not decode,
//     Transient "connection_closed"), Config "arguments_invalid" for
//     arguments that are not one JSON object (nothing is sent), and
//     Protocol "call_input_required" for a multi-round-trip "input
//     required" result (it is neither fulfilled nor re-sent).
//
// When r.OnProgress is set, the request's _meta carries a progress token
// unique within the session, and every notifications/progress with that
// token that the session handles before Call returns is passed to
// r.OnProgress on the SDK's notification goroutine (Message cut to
// ports.MaxProgressMessage bytes); once Call has returned it is never
// called again. Notifications with any other token are dropped.
//
// A tool error (isError) is a result, not an error. Safe for concurrent use.
func (s *session) Call(ctx context.Context, r ports.CallRequest) (ports.CallResult, error) {
	if err := s.usable(ctx); err != nil {
		return ports.CallResult{}, err
	}
	if r.Traceparent != "" && s.conn.Trace != nil {
		tctx, err := s.conn.Trace(ctx, r.Traceparent)
		if err != nil {
			if re := refusalOf(err); re != nil {
				return ports.CallResult{}, s.stamp(re)
			}
			return ports.CallResult{}, s.refuse(refusal.Config, "traceparent_refused", "")
		}
		ctx = tctx
	}
	if s.conn.WithTool != nil {
		if t, ok := s.headerTools.Load(r.Name); ok {
			ctx = s.conn.WithTool(ctx, t.(*mcp.Tool))
		}
	}
	cp := &callParams{params: mcp.CallToolParams{Name: r.Name}}
	params := &cp.params
	if len(r.Arguments) > 0 {
		// Only the first byte is checked here: the SDK encodes the
		// arguments before anything is sent and fails on invalid JSON,
		// which the error path below tells apart. The host's path has
		// validated them already (catalog.Tool.Call), so a second full
		// pass would cost every call for nothing.
		if !startsObject(r.Arguments) {
			return ports.CallResult{}, s.refuseArguments()
		}
		// A pointer into the same allocation: boxing the RawMessage
		// itself into Arguments (an any) would allocate once more.
		cp.args = r.Arguments
		params.Arguments = &cp.args
	}
	if r.Traceparent != "" && s.conn.Trace != nil && s.conn.TraceMeta {
		params.Meta = mcp.Meta{"traceparent": r.Traceparent}
	}
	if r.OnProgress != nil {
		token, remove := s.progress.add(r.OnProgress)
		defer remove()
		params.SetProgressToken(token)
	}
	round := ports.InputRoundOf(ctx)
	if round != nil && s.modern.Load() {
		params.InputResponses, params.RequestState = roundParams(round), round.State
	}
	jctx, joined := s.joinCall(ctx)
	var res *mcp.CallToolResult
	var err error
	if body, ok := s.rawCallParams(params, len(cp.args)); ok {
		// The session's own path (rawrequest.go): a result in the shape
		// ordinary servers write is sliced, not decoded (callresult.go);
		// any other is decoded as the SDK would and goes its way below.
		var raw json.RawMessage
		if raw, err = s.roundTrip(jctx, methodCallTool, body); err == nil {
			if out, ok := rawCallResult(raw); ok {
				joined.end()
				return out, nil
			}
			res, err = decodeCallResult(raw)
		}
	} else {
		res, err = guarded(s.cs.CallTool)(jctx, params)
	}
	handed := false
	if err == nil && res.InputRequests != nil && s.modern.Load() && res.NeedsInput() {
		if round != nil {
			// The host hands the questions on (handon.go).
			err, handed = s.handOn(round, res.InputRequests, res.RequestState), true
		} else {
			res, err = s.callRounds(jctx, params, res)
		}
	}
	joined.end()
	if handed && err == nil {
		return handOnResult, nil
	}
	if err != nil {
		if re := roundFailure(err); re != nil {
			return ports.CallResult{}, re
		}
		if len(r.Arguments) > 0 && !json.Valid(r.Arguments) {
			return ports.CallResult{}, s.refuseArguments()
		}
		return ports.CallResult{}, s.withServerMessage(s.failure(ctx, err, opCall), err, opCall, argumentValues(r.Arguments))
	}
	if res.NeedsInput() || res.InputRequests != nil {
		// An "input required" result of a legacy session (whose server
		// cannot have asked for one: mcpward never re-sends a call there),
		// or one whose input requests contradict its resultType.
		return ports.CallResult{}, s.refuse(refusal.Protocol, "call_input_required", "")
	}
	out, err := convertResult(res)
	if err != nil {
		return ports.CallResult{}, s.refuse(refusal.Protocol, "malformed_reply", "")
	}
	return out, nil
}

// rawCallParams encodes a tools/call's params for the session's own path
// as the SDK's client session would send them (appendParamsOpen's _meta,
// the name, the arguments as given: the transport compacts and checks them
// as it writes the request, as it does the SDK's). ok is false for a
// request it leaves to the SDK: no own path, a multi round-trip round
// (input responses, request state).
func (s *session) rawCallParams(p *mcp.CallToolParams, argsLen int) (json.RawMessage, bool) {
	if s.raw == nil || p.InputResponses != nil || p.RequestState != "" {
		return nil, false
	}
	b, ok := s.appendParamsOpen(make([]byte, 0, 320+len(p.Name)+argsLen), p.Meta)
	if !ok {
		return nil, false
	}
	b = append(b, `"name":`...)
	b = jsontext.AppendStringNoHTML(b, p.Name)
	b = append(b, `,"arguments":`...)
	if a, _ := p.Arguments.(*json.RawMessage); a != nil {
		b = append(b, *a...)
	} else {
		b = append(b, '{', '}')
	}
	return append(b, '}'), true
}

// callRounds runs the rounds of a tools/call whose first result asked for
// input (mrtr.go). Each round is a new tools/call with the same name,
// arguments and _meta (progress token included), the responses and the
// request state of the round before.
func (s *session) callRounds(ctx context.Context, first *mcp.CallToolParams, res *mcp.CallToolResult) (*mcp.CallToolResult, error) {
	for round := 1; res.NeedsInput(); round++ {
		responses, err := s.nextRound(ctx, round, res.InputRequests, res.RequestState)
		if err != nil {
			return nil, err
		}
		p := &mcp.CallToolParams{Meta: first.Meta, Name: first.Name, Arguments: first.Arguments, InputResponses: responses, RequestState: res.RequestState}
		if res, err = guarded(s.cs.CallTool)(ctx, p); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// callParams is a call's params with the arguments they point to, in one
// allocation.
type callParams struct {
	params mcp.CallToolParams
	args   json.RawMessage
}

// startsObject reports whether the first byte of b past JSON whitespace
// opens an object.
func startsObject(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c == '{'
	}
	return false
}

// refuseArguments is the refusal of arguments that are not one JSON object.
func (s *session) refuseArguments() *refusal.Error {
	return s.refuse(refusal.Config, "arguments_invalid", "arguments are not a JSON object")
}

// convertResult turns the SDK's decoded result back into raw JSON.
func convertResult(res *mcp.CallToolResult) (ports.CallResult, error) {
	out := ports.CallResult{IsError: res.IsError}
	var err error
	if out.Content, err = marshalContent(res.Content); err != nil {
		return ports.CallResult{}, err
	}
	if res.StructuredContent != nil {
		if out.StructuredContent, err = json.Marshal(res.StructuredContent); err != nil {
			return ports.CallResult{}, err
		}
	}
	if meta := resultMeta(res.Meta); len(meta) > 0 {
		if out.Meta, err = json.Marshal(meta); err != nil {
			return ports.CallResult{}, err
		}
	}
	return out, nil
}

// protocolMetaPrefix starts the _meta keys the protocol reserves for
// itself (on a modern session a server puts its serverInfo on every
// result under one of them).
const protocolMetaPrefix = "io.modelcontextprotocol/"

// resultMeta is a result's _meta without the protocol's own keys: they
// describe the exchange, not the result. m itself is never modified.
func resultMeta(m mcp.Meta) mcp.Meta {
	for k := range m {
		if strings.HasPrefix(k, protocolMetaPrefix) {
			out := make(mcp.Meta, len(m))
			for k, v := range m {
				if !strings.HasPrefix(k, protocolMetaPrefix) {
					out[k] = v
				}
			}
			return out
		}
	}
	return m
}

// usable refuses a request when the session is closing or ctx has ended.
func (s *session) usable(ctx context.Context) error {
	if s.closed.Load() {
		return s.refuse(refusal.Transient, "session_closed", "")
	}
	if err := ctx.Err(); err != nil {
		return ctxRefusal(err, s.server, s.conn.Origin)
	}
	return nil
}

// failure maps the error of a request made under ctx (the caller's).
func (s *session) failure(ctx context.Context, err error, o op) error {
	if isCtxErr(err) {
		if cerr := ctx.Err(); cerr != nil {
			s.abandon()
			return s.refuse(refusal.Transient, o.abandoned, ctxDetail(cerr))
		}
	}
	if s.ctx.Err() != nil {
		// Close ended the request (or the connection under it).
		return s.refuse(refusal.Transient, "session_closed", "")
	}
	return s.classify(err, o)
}

// abandon gives up on the connection after an in-flight request lost its
// context: the SDK has no cancellation acknowledgement, so the Abort hook
// ends the connection; without one the session is closed in the
// background (Close waits for that close).
func (s *session) abandon() {
	if s.conn.Abort != nil {
		s.abort()
		return
	}
	go func() { _ = s.Close() }()
}

// abort runs the Conn's Abort hook at most once per session.
func (s *session) abort() {
	if s.conn.Abort == nil {
		return
	}
	s.abortOnce.Do(s.conn.Abort)
}

// release runs the Conn's Release hook at most once.
func (s *session) release() {
	s.released.Do(func() {
		if s.conn.Release != nil {
			s.conn.Release()
		}
	})
}

// Close ends the session: it retires every in-flight request (they return
// Reason "session_closed"), closes the SDK session, runs the Conn's Abort
// hook when that has not finished within the close timeout, waits as long
// once more, and then runs the Release hook. It returns nil, or Class
// Transient, Reason "close_timeout" when the session still had not closed
// (the SDK's close keeps running in the background then). Close is
// idempotent and safe for concurrent use; every call returns the first
// call's result once it is done.
func (s *session) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.shutdown() })
	return s.closeErr
}

func (s *session) shutdown() error {
	s.closed.Store(true)
	s.cancel()
	s.calls.close()
	defer s.release()
	if s.cs == nil {
		return nil
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_ = s.cs.Close()
	}()
	timer := time.NewTimer(s.closeTimeout)
	defer timer.Stop()
	select {
	case <-closed:
	case <-timer.C:
		s.abort()
		timer.Reset(s.closeTimeout)
		select {
		case <-closed:
		case <-timer.C:
			return s.refuse(refusal.Transient, "close_timeout", "")
		}
	}
	<-s.waited
	return nil
}

// refuse builds a refusal stamped with the server id and origin. detail
// must be a fixed phrase (or a list kind) chosen by this package.
func (s *session) refuse(class refusal.Class, reason, detail string) *refusal.Error {
	return &refusal.Error{Class: class, Reason: reason, Server: s.server, Origin: s.conn.Origin, Detail: detail}
}

// stamp copies re, filling in the server id and origin where empty.
func (s *session) stamp(re *refusal.Error) *refusal.Error {
	c := *re
	if c.Server == "" {
		c.Server = s.server
	}
	if c.Origin == "" {
		c.Origin = s.conn.Origin
	}
	return &c
}
