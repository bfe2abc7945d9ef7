package composition

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/adapters/mcpsession/mcpserve"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/supervisor"
	"github.com/mcpward/mcpward/ports"
)

// TelemetryScope is the instrumentation scope name of the tracer and the
// meter mcpward takes from the host's providers (Config.TracerProvider,
// Config.MeterProvider).
const TelemetryScope = "github.com/mcpward/mcpward/composition"

// ErrorTypeToolError is the error.type of a tools/call span whose result
// is a tool error (isError: true), as the MCP semantic conventions name it.
const ErrorTypeToolError = "tool_error"

// telemetry is what a Host records with when the host gave it a
// TracerProvider or a MeterProvider. A nil *telemetry records nothing and
// wraps nothing.
type telemetry struct {
	tracer  trace.Tracer // nil without a TracerProvider
	opDur   mcpconv.ClientOperationDuration
	sessDur mcpconv.ClientSessionDuration
	srvDur  mcpconv.ServerOperationDuration
	srvSess mcpconv.ServerSessionDuration
	metrics bool
}

// newTelemetry returns the telemetry of cfg, or nil when cfg gives neither
// provider. An instrument the MeterProvider refuses to create records
// nothing.
func newTelemetry(cfg Config) *telemetry {
	if cfg.TracerProvider == nil && cfg.MeterProvider == nil {
		return nil
	}
	t := &telemetry{}
	if cfg.TracerProvider != nil {
		t.tracer = cfg.TracerProvider.Tracer(TelemetryScope, trace.WithSchemaURL(semconv.SchemaURL))
	}
	var m metric.Meter
	if cfg.MeterProvider != nil {
		m = cfg.MeterProvider.Meter(TelemetryScope, metric.WithSchemaURL(semconv.SchemaURL))
		t.metrics = true
	}
	// A nil Meter gives no-op instruments.
	t.opDur, _ = mcpconv.NewClientOperationDuration(m)
	t.sessDur, _ = mcpconv.NewClientSessionDuration(m)
	t.srvDur, _ = mcpconv.NewServerOperationDuration(m)
	t.srvSess, _ = mcpconv.NewServerSessionDuration(m)
	return t
}

// connector returns c, recording every MCP request of its sessions, or c
// itself when t is nil.
func (t *telemetry) connector(c ports.Connector) ports.Connector {
	if t == nil || c == nil {
		return c
	}
	return &tracedConnector{inner: c, tel: t}
}

// tracedConnector is a Connector whose sessions record a client span and
// the mcp.client.operation.duration metric per MCP request, and the
// mcp.client.session.duration metric per session.
type tracedConnector struct {
	inner ports.Connector
	tel   *telemetry
}

// telPeer is what the telemetry says of where a session goes: never a path,
// query, header, argument or environment value.
type telPeer struct {
	transport mcpconv.NetworkTransportAttr
	address   string
	port      int
}

// telPeerOf returns the peer of t: for HTTP the host and port of its
// origin, for stdio the pipe.
func telPeerOf(t ports.Target) telPeer {
	if t.Kind != ports.TransportHTTP {
		return telPeer{transport: mcpconv.NetworkTransportPipe}
	}
	p := telPeer{transport: mcpconv.NetworkTransportTCP}
	o := originOf(t.URL)
	if o == "" {
		return p
	}
	_, hostport, _ := strings.Cut(o, "://")
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return p
	}
	p.address = host
	p.port, _ = strconv.Atoi(port)
	return p
}

// attrs returns the peer's attributes appended to kv.
func (p telPeer) attrs(kv []attribute.KeyValue) []attribute.KeyValue {
	kv = append(kv, semconv.NetworkTransportKey.String(string(p.transport)))
	if p.address != "" {
		kv = append(kv, semconv.ServerAddress(p.address), semconv.ServerPort(p.port))
	}
	return kv
}

// Connect connects through the inner Connector under a client span named
// after the handshake the session made ("initialize" for the legacy era,
// "server/discover" for the modern one).
func (c *tracedConnector) Connect(ctx context.Context, t ports.Target, s ports.Signals) (ports.Session, error) {
	p := telPeerOf(t)
	op := c.tel.start(ctx, "initialize", "", p)
	sess, err := c.inner.Connect(op.ctx, t, s)
	version := ""
	if err == nil {
		version = sess.Identity().ProtocolVersion
		if ProtocolEra(version) == "modern" {
			op.method = "server/discover"
		}
	}
	op.end(err, version, false)
	if err != nil {
		return nil, err
	}
	return &tracedSession{Session: sess, tel: c.tel, peer: p, version: version, began: time.Now()}, nil
}

// tracedSession is a Session recording every request (see tracedConnector).
type tracedSession struct {
	ports.Session
	tel     *telemetry
	peer    telPeer
	version string
	began   time.Time
	once    sync.Once
}

// List lists one page under a "{kind}/list" span.
func (s *tracedSession) List(ctx context.Context, kind ports.ListKind, cursor string) (ports.Page, error) {
	op := s.tel.start(ctx, listMethod(kind), "", s.peer)
	page, err := s.Session.List(op.ctx, kind, cursor)
	op.end(err, s.version, false)
	return page, err
}

// Call calls a tool under a "tools/call {name}" span. When the span is
// sampled and the caller set no traceparent, the call carries the span's
// (the session sends it only where the transport's scoping rule allows).
func (s *tracedSession) Call(ctx context.Context, r ports.CallRequest) (ports.CallResult, error) {
	op := s.tel.start(ctx, "tools/call", r.Name, s.peer)
	if r.Traceparent == "" && op.span != nil {
		if sc := op.span.SpanContext(); sc.IsValid() && sc.IsSampled() {
			r.Traceparent = traceparentOf(sc)
		}
	}
	res, err := s.Session.Call(op.ctx, r)
	op.end(err, s.version, err == nil && res.IsError)
	return res, err
}

// GetPrompt gets a prompt under a "prompts/get {name}" span.
func (s *tracedSession) GetPrompt(ctx context.Context, r ports.GetPromptRequest) (ports.PromptResult, error) {
	op := s.tel.start(ctx, "prompts/get", r.Name, s.peer)
	res, err := s.Session.GetPrompt(op.ctx, r)
	op.end(err, s.version, false)
	return res, err
}

// ReadResource reads a resource under a "resources/read" span. The
// resource's URI is not recorded: a URI may carry a query, a path or a
// token the server minted.
func (s *tracedSession) ReadResource(ctx context.Context, r ports.ReadRequest) (ports.ReadResult, error) {
	op := s.tel.start(ctx, "resources/read", "", s.peer)
	res, err := s.Session.ReadResource(op.ctx, r)
	op.end(err, s.version, false)
	return res, err
}

// Subscribe subscribes under a "resources/subscribe" span (no URI).
func (s *tracedSession) Subscribe(ctx context.Context, uri string) error {
	op := s.tel.start(ctx, "resources/subscribe", "", s.peer)
	err := s.Session.Subscribe(op.ctx, uri)
	op.end(err, s.version, false)
	return err
}

// Unsubscribe unsubscribes under a "resources/unsubscribe" span (no URI).
func (s *tracedSession) Unsubscribe(ctx context.Context, uri string) error {
	op := s.tel.start(ctx, "resources/unsubscribe", "", s.peer)
	err := s.Session.Unsubscribe(op.ctx, uri)
	op.end(err, s.version, false)
	return err
}

// Complete completes under a "completion/complete" span (no argument
// value).
func (s *tracedSession) Complete(ctx context.Context, r ports.CompleteRequest) (ports.Completion, error) {
	op := s.tel.start(ctx, "completion/complete", "", s.peer)
	res, err := s.Session.Complete(op.ctx, r)
	op.end(err, s.version, false)
	return res, err
}

// Close closes the session and records its duration, once.
func (s *tracedSession) Close() error {
	err := s.Session.Close()
	s.once.Do(func() {
		if !s.tel.metrics {
			return
		}
		kv := s.peer.attrs(make([]attribute.KeyValue, 0, 4))
		if s.version != "" {
			kv = append(kv, semconv.McpProtocolVersion(s.version))
		}
		s.tel.sessDur.Record(context.Background(), time.Since(s.began).Seconds(), kv...)
	})
	return err
}

// listMethod is the MCP method of a list kind.
func listMethod(k ports.ListKind) string {
	switch k {
	case ports.ListTools:
		return "tools/list"
	case ports.ListPrompts:
		return "prompts/list"
	case ports.ListResources:
		return "resources/list"
	case ports.ListResourceTemplates:
		return "resources/templates/list"
	}
	return "_OTHER"
}

// operation is one MCP request being recorded.
type operation struct {
	tel    *telemetry
	ctx    context.Context
	span   trace.Span // nil without a tracer
	method string
	target string
	peer   telPeer
	began  time.Time
}

// start begins recording method (with target, a tool or prompt name, or
// "") under ctx.
func (t *telemetry) start(ctx context.Context, method, target string, p telPeer) operation {
	op := operation{tel: t, ctx: ctx, method: method, target: target, peer: p, began: time.Now()}
	if t.tracer != nil {
		name := method
		if target != "" {
			name = method + " " + target
		}
		op.ctx, op.span = t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient))
	}
	return op
}

// end records the operation's outcome: err (a *refusal.Error's Reason as
// error.type; never its text), the negotiated version, and toolError for a
// tools/call whose result is a tool error.
func (op operation) end(err error, version string, toolError bool) {
	errType := ""
	switch {
	case err != nil:
		errType = ErrorType(err)
	case toolError:
		errType = ErrorTypeToolError
	}
	if op.span == nil && !op.tel.metrics {
		return
	}
	kv := make([]attribute.KeyValue, 0, 8)
	kv = methodAttrs(kv, op.method, op.target)
	if version != "" {
		kv = append(kv, semconv.McpProtocolVersion(version))
	}
	kv = op.peer.attrs(kv)
	if errType != "" {
		kv = append(kv, semconv.ErrorTypeKey.String(errType))
	}
	if op.tel.metrics {
		op.tel.opDur.Inst().Record(op.ctx, time.Since(op.began).Seconds(), metric.WithAttributes(kv...))
	}
	if op.span != nil {
		// The handshake's span was started before the era was known.
		op.span.SetName(spanName(op.method, op.target))
		op.span.SetAttributes(kv...)
		if errType != "" {
			op.span.SetStatus(codes.Error, errType)
		}
		op.span.End()
	}
}

// methodAttrs appends to kv the attributes of an MCP request of method
// with target (a tool or prompt name, or ""): mcp.method.name, and
// gen_ai.tool.name with gen_ai.operation.name for a tools/call, or
// gen_ai.prompt.name for a prompts/get.
func methodAttrs(kv []attribute.KeyValue, method, target string) []attribute.KeyValue {
	kv = append(kv, semconv.McpMethodNameKey.String(method))
	switch {
	case target == "":
	case method == "tools/call":
		kv = append(kv, semconv.GenAIToolName(target), semconv.GenAIOperationNameExecuteTool)
	case method == "prompts/get":
		kv = append(kv, semconv.GenAIPromptName(target))
	}
	return kv
}

func spanName(method, target string) string {
	if target == "" {
		return method
	}
	return method + " " + target
}

// ErrorType is the error.type mcpward records for err on a span or a
// metric: the Reason of its *refusal.Error when that is a plain
// lower_snake_case word of at most 64 bytes, else "_OTHER"; "" for nil.
// Never the error's text. A host recording its own spans around
// mcpward's calls may use it to stay consistent.
func ErrorType(err error) string {
	if err == nil {
		return ""
	}
	r := refusal.ReasonOf(err)
	if !isWord(r) {
		return "_OTHER"
	}
	return r
}

// isWord reports whether r is a plain lower_snake_case word of 1 to 64
// bytes: what a reason may be to become an attribute.
func isWord(r string) bool {
	if r == "" || len(r) > 64 {
		return false
	}
	for i := 0; i < len(r); i++ {
		c := r[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// traceparentOf is sc as a W3C traceparent of version 00.
func traceparentOf(sc trace.SpanContext) string {
	tid, sid := sc.TraceID(), sc.SpanID()
	var b [55]byte
	const hexd = "0123456789abcdef"
	b[0], b[1], b[2] = '0', '0', '-'
	for i, c := range tid {
		b[3+2*i], b[4+2*i] = hexd[c>>4], hexd[c&0xf]
	}
	b[35] = '-'
	for i, c := range sid {
		b[36+2*i], b[37+2*i] = hexd[c>>4], hexd[c&0xf]
	}
	b[52] = '-'
	flags := byte(sc.TraceFlags())
	b[53], b[54] = hexd[flags>>4], hexd[flags&0xf]
	return string(b[:])
}

// observer returns the mcpserve.Observer recording a server span and the
// mcp.server.operation.duration metric per request a Gateway's client
// sends, and mcp.server.session.duration per session a client opened with
// initialize (from the initialize request to the session's end, with the
// negotiated mcp.protocol.version), or nil when t is nil. A stateless
// request of protocol 2026-07-28 or later is no session: it records only
// its operation. A client's valid W3C traceparent (params._meta, else the
// HTTP header) becomes the span's remote parent; an invalid one is
// ignored.
func (t *telemetry) observer() mcpserve.Observer {
	if t == nil {
		return nil
	}
	return func(ctx context.Context, r mcpserve.Request) (context.Context, func(mcpserve.Outcome)) {
		began := time.Now()
		var span trace.Span
		if t.tracer != nil {
			if sc, ok := parseTraceparent(r.Traceparent); ok {
				ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
			}
			ctx, span = t.tracer.Start(ctx, spanName(r.Method, r.Target), trace.WithSpanKind(trace.SpanKindServer))
		}
		return ctx, func(o mcpserve.Outcome) {
			errType := ""
			switch {
			case o.Err != nil:
				errType = ErrorType(o.Err)
			case o.ToolError:
				errType = ErrorTypeToolError
			}
			kv := make([]attribute.KeyValue, 0, 5)
			kv = methodAttrs(kv, r.Method, r.Target)
			if errType != "" {
				kv = append(kv, semconv.ErrorTypeKey.String(errType))
			}
			if t.metrics {
				t.srvDur.Inst().Record(ctx, time.Since(began).Seconds(), metric.WithAttributes(kv...))
				if o.SessionWait != nil {
					go t.sessionEnded(began, o.ProtocolVersion, o.SessionWait)
				}
			}
			if span != nil {
				span.SetAttributes(kv...)
				if errType != "" {
					span.SetStatus(codes.Error, errType)
				}
				span.End()
			}
		}
	}
}

// sessionEnded waits for a served session that began at began to end and
// records its mcp.server.session.duration.
func (t *telemetry) sessionEnded(began time.Time, version string, wait func()) {
	wait()
	if version == "" {
		t.srvSess.Record(context.Background(), time.Since(began).Seconds())
		return
	}
	t.srvSess.Record(context.Background(), time.Since(began).Seconds(), semconv.McpProtocolVersion(version))
}

// parseTraceparent returns the remote span context of a valid W3C
// traceparent of version 00 (httptransport.ValidTraceparent).
func parseTraceparent(tp string) (trace.SpanContext, bool) {
	if !httptransport.ValidTraceparent(tp) {
		return trace.SpanContext{}, false
	}
	tid, err := trace.TraceIDFromHex(tp[3:35])
	if err != nil {
		return trace.SpanContext{}, false
	}
	sid, err := trace.SpanIDFromHex(tp[36:52])
	if err != nil {
		return trace.SpanContext{}, false
	}
	flags, err := strconv.ParseUint(tp[53:55], 16, 8)
	if err != nil {
		return trace.SpanContext{}, false
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid,
		TraceFlags: trace.TraceFlags(flags) & trace.FlagsSampled, Remote: true}), true
}

// The names of the INTERNAL spans of mcpward's own steps. A step's span
// carries error.type (a refusal's reason word, else "_OTHER") when it
// fails, and nothing of the server's definition: no name, command,
// argument, URL, header or environment value.
const (
	// SpanEvaluate is one server's activation decision (Host.Evaluate,
	// and the evaluation of Host.Connect and Fleet.Add), with the
	// attributes AttrDecisionState and AttrDecisionReason.
	SpanEvaluate = "mcpward.evaluate"
	// SpanConnect is one connect attempt of a supervised server: the
	// parent of its handshake's client span ("initialize" or
	// "server/discover").
	SpanConnect = "mcpward.connect"
	// SpanDiscovery is the discovery of a session's lists (at connect or
	// at a refresh): the parent of its "{kind}/list" client spans.
	SpanDiscovery = "mcpward.discovery"
	// SpanApprove is one Host.Approve: the user's approval of a server's
	// current identity, recorded (or refused: error.type).
	SpanApprove = "mcpward.approve"
	// SpanRevoke is one Host.Revoke or Host.RevokeAll.
	SpanRevoke = "mcpward.revoke"
	// SpanSignIn is one OAuth sign-in (Host.SignIn, and package signin's
	// ways in): from its discovery to the tokens stored or its failure;
	// a sign-in the host drives (signin.Begin) lasts until its redirect's
	// outcome, or until it is closed without one (error.type "canceled").
	SpanSignIn = "mcpward.signin"
	// SpanRefresh is one renewal of an expired OAuth credential (a
	// refresh token, or the client credentials or workload grant again),
	// once per renewal however many requests wait for it.
	SpanRefresh = "mcpward.refresh"
)

// The attributes of a SpanEvaluate span: words, never a value.
const (
	// AttrDecisionState is the State the evaluation gave the server
	// ("allowed", "denied", ...).
	AttrDecisionState = "mcpward.decision.state"
	// AttrDecisionReason is the decision's Reason when it is a plain
	// lower_snake_case word (absent otherwise, or when there is none).
	AttrDecisionReason = "mcpward.decision.reason"
)

// step returns the supervisor.Options.Step recording SpanConnect and
// SpanDiscovery, or nil when t has no tracer.
func (t *telemetry) step() func(context.Context, string) (context.Context, func(error)) {
	if t == nil || t.tracer == nil {
		return nil
	}
	return func(ctx context.Context, step string) (context.Context, func(error)) {
		if step == supervisor.StepConnect {
			return t.stepSpan(ctx, SpanConnect)
		}
		return t.stepSpan(ctx, SpanDiscovery)
	}
}

// OAuthSteps returns the step hook (adapters/oauth's Options.Step) that
// records the OAuth client's steps as INTERNAL spans of tp's tracer
// (scope TelemetryScope): "sign_in" as SpanSignIn, "refresh" as
// SpanRefresh, each with error.type (a refusal's reason word, else
// "_OTHER") when it fails and no other attribute; another step records
// nothing. It returns nil when tp is nil: no hook, no cost. Package
// composition/signin's New passes it Config.TracerProvider. The hook is
// safe for concurrent use.
func OAuthSteps(tp trace.TracerProvider) func(ctx context.Context, step string) (context.Context, func(error)) {
	if tp == nil {
		return nil
	}
	t := &telemetry{tracer: tp.Tracer(TelemetryScope, trace.WithSchemaURL(semconv.SchemaURL))}
	return func(ctx context.Context, step string) (context.Context, func(error)) {
		switch step {
		case "sign_in":
			return t.stepSpan(ctx, SpanSignIn)
		case "refresh":
			return t.stepSpan(ctx, SpanRefresh)
		}
		return ctx, func(error) {}
	}
}

// endStep ends span, with error.type and an Error status when err is
// non-nil.
func endStep(span trace.Span, err error) {
	if err != nil {
		et := ErrorType(err)
		span.SetAttributes(semconv.ErrorTypeKey.String(et))
		span.SetStatus(codes.Error, et)
	}
	span.End()
}

// stepSpan starts the INTERNAL span name under ctx and returns the
// context and its end (endStep), or ctx and a func doing nothing when t
// has no tracer.
func (t *telemetry) stepSpan(ctx context.Context, name string) (context.Context, func(error)) {
	if t == nil || t.tracer == nil {
		return ctx, func(error) {}
	}
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal))
	return ctx, func(err error) { endStep(span, err) }
}

// evaluateSpan starts the SpanEvaluate span of one server under ctx, or
// returns ctx and a nil span when t has no tracer.
func (t *telemetry) evaluateSpan(ctx context.Context) (context.Context, trace.Span) {
	if t == nil || t.tracer == nil {
		return ctx, nil
	}
	return t.tracer.Start(ctx, SpanEvaluate, trace.WithSpanKind(trace.SpanKindInternal))
}

// endEvaluate ends span (nil: nothing) with the decision's state and its
// reason when that is a word, and error.type when the decision failed.
func endEvaluate(span trace.Span, r ServerEvaluation) {
	if span == nil {
		return
	}
	span.SetAttributes(attribute.String(AttrDecisionState, string(r.State)))
	if isWord(r.Reason) {
		span.SetAttributes(attribute.String(AttrDecisionReason, r.Reason))
	}
	endStep(span, r.Err)
}
