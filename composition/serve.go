package composition

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpward/mcpward/adapters/mcpsession/mcpserve"
	"github.com/mcpward/mcpward/adapters/stdiotransport"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/supervisor"
	"github.com/mcpward/mcpward/ports"
)

// StatusToolName is the gateway's own tool: it reports each server's
// state and, for one that is refused, denied or failed, the reason.
const StatusToolName = "mcpward_status"

// auditTimeout bounds the append of one call's audit record.
const auditTimeout = 5 * time.Second

// GatewayOptions configure Fleet.Gateway; nil means the defaults.
type GatewayOptions struct {
	// Server, when not "", fronts that server alone, under its own tool
	// and prompt names; "" fronts every server of the Fleet under the
	// host-facing names (catalog.ToolName).
	Server string
	// Name and Version are the gateway's implementation info; "" means
	// "mcpward" and "dev".
	Name, Version string
	// Logger receives the gateway's warnings (a tool left out, an audit
	// record that could not be appended); nil discards them.
	Logger *slog.Logger
	// Now returns the time of audit records; nil means time.Now.
	Now func() time.Time
	// MaxDescription caps, in bytes, each description handed to clients
	// (of a tool, a prompt and its arguments, a resource, a template, and
	// each description in a tool's schemas), cut with a visible marker;
	// MaxTitle each name, title and MIME type. 0 means 8 KiB and 512 bytes
	// (mcpserve.DefaultMaxDescription, DefaultMaxTitle). Every such text is
	// handed on under core/textsafe's rule whatever the caps.
	MaxDescription, MaxTitle int
	// HTTP are the limits of HTTPHandler and ServeHTTP; a zero field
	// means its default, a negative one no limit.
	HTTP HTTPLimits
	// StartupWait bounds, from the Gateway's making, the wait for the
	// Fleet's connect round (Fleet.Wait) before the first lists are
	// answered: a tools/list, prompts/list, resources/list or
	// resources/templates/list, and a call, get or read of a name not
	// offered yet, wait until every server's first connect ended or this
	// time passed, then answer with what connected (StatusToolName says
	// what did not). Later requests wait no more. 0 answers at once with
	// what is connected then (servers arrive by list_changed).
	StartupWait time.Duration
	// ReconnectWait bounds the wait of a call (tools/call, prompts/get,
	// resources/read) of a server that is connecting (again: after a
	// client's cancel stopped its process, or after it was lost) for it
	// to be connected, before the request is sent; nothing is sent before.
	// 0 fails such a call at once (Class Transient, Reason
	// "server_unavailable").
	ReconnectWait time.Duration
}

// DefaultHTTPLimits returns the limits a zero HTTPLimits means.
func DefaultHTTPLimits() HTTPLimits {
	return HTTPLimits{MaxConnections: mcpserve.DefaultMaxConnections, MaxSessions: mcpserve.DefaultMaxSessions,
		SessionIdleTimeout: mcpserve.DefaultSessionIdleTimeout, IdleTimeout: mcpserve.DefaultIdleTimeout,
		HeaderTimeout: mcpserve.DefaultHeaderTimeout, BodyTimeout: mcpserve.DefaultBodyTimeout}
}

// HTTPLimits bound what clients of a Gateway served over Streamable HTTP
// may hold. A server at a limit answers 503 with Retry-After (5 s), never
// by growing. Zero fields mean the defaults, negative ones no limit.
type HTTPLimits struct {
	// MaxConnections caps the connections open at once (ServeHTTP);
	// default 256. One more is answered 503 and closed before a request
	// is read.
	MaxConnections int
	// MaxSessions caps the client sessions open at once; default 128. An
	// initialize past it is answered 503.
	MaxSessions int
	// SessionIdleTimeout closes a session that received no request for
	// this long; default 30 minutes.
	SessionIdleTimeout time.Duration
	// IdleTimeout closes a kept-alive connection with no request for this
	// long (ServeHTTP); default 2 minutes. A request refused 401 or 403
	// closes its connection at once.
	IdleTimeout time.Duration
	// HeaderTimeout bounds reading a request's headers (ServeHTTP), and
	// BodyTimeout its body (408); default 10 seconds each.
	HeaderTimeout, BodyTimeout time.Duration
}

// Gateway is a Fleet served as one MCP server (mcpward serve): the tools,
// prompts and resources of its servers, kept current with the Fleet's
// generations (a change sends notifications/tools/list_changed to every
// client), plus StatusToolName. Their names, titles and descriptions are
// handed to clients under core/textsafe's rule and caps (see
// GatewayOptions.MaxDescription). Every call is forwarded through the
// Fleet (arguments validated against the narrowed schema, results cut to
// the admission caps, the supervisor's call timeouts; a result cut ends in
// a notice and carries "mcpward/truncated" in _meta, otherwise its content
// passes as the server sent it) and audited with two ports.AuditCall
// records tied by a call id: one that the call started, appended while the
// call is forwarded and durable before its result is returned, and one of
// its outcome, written without waiting (with a ports.AuditQueue, in the
// log's next group commit) and durable once Close returns (CONTRACT.md:
// what a crash can lose). It is safe for concurrent use; Close stops it
// and makes the outcome records durable (the Fleet stays open: close it
// after).
type Gateway struct {
	f    *Fleet
	only string
	log  *slog.Logger
	now  func() time.Time
	srv  *mcpserve.Server
	http HTTPLimits

	mu     sync.Mutex
	routes map[string]route // offered name → where calls go

	clock catalogClock // when each catalog was first seen (serve_cache.go)

	calls    *callIDs       // ids tying a call's two audit records
	outcomes sync.WaitGroup // outcome appends of a log that is not a ports.AuditQueue

	ready     chan struct{} // closed when the startup wait is over
	stopReady context.CancelFunc
	reconnect time.Duration // GatewayOptions.ReconnectWait
}

// route is where a tool offered under some name is called.
type route struct{ server, tool string }

// Gateway returns a Gateway of f with opts. The upstream servers stay
// connected under f's supervisors for the Gateway's life.
func (f *Fleet) Gateway(opts *GatewayOptions) *Gateway {
	o := GatewayOptions{}
	if opts != nil {
		o = *opts
	}
	g := &Gateway{f: f, only: o.Server, log: o.Logger, now: o.Now, http: o.HTTP, routes: map[string]route{},
		ready: make(chan struct{}), reconnect: o.ReconnectWait, calls: newCallIDs()}
	rctx, stop := context.WithCancel(context.Background())
	g.stopReady = stop
	if o.StartupWait > 0 {
		go func() {
			defer close(g.ready)
			ctx, cancel := context.WithTimeout(rctx, o.StartupWait)
			defer cancel()
			_ = f.Wait(ctx)
		}()
	} else {
		close(g.ready)
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	if g.now == nil {
		g.now = time.Now
	}
	g.srv = mcpserve.New(gatewayBackend{g}, &mcpserve.Options{Name: o.Name, Version: o.Version, Logger: g.log,
		MaxDescription: o.MaxDescription, MaxTitle: o.MaxTitle, Ready: g.waitStartup,
		// stdio lines framed and decoded by mcpward, not by the SDK's
		// per-message reflective decoder (serve_stdio_test.go)
		StdioTransport: stdiotransport.ServerTransport,
		// the Host's telemetry (nil without providers: telemetry.go)
		Observer: f.host.tel.observer()})
	return g
}

// ServeStdio serves one client over in and out until the client closes
// in or ctx ends (then it returns nil): newline-delimited JSON-RPC, one
// message a line (stdiotransport.ServerTransport); a line that is not one
// message, a batch, or a line over stdiotransport.DefaultMaxLineLength
// bytes ends the connection, and ServeStdio returns that error. A client's cancel of a call ends
// the upstream call: for a stdio upstream server that stops its process
// (a stdio request cannot be cancelled cleanly), so whatever state it
// held is lost and the supervisor starts it again.
func (g *Gateway) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	return g.srv.ServeStdio(ctx, in, out)
}

// HTTPHandler returns the Streamable HTTP handler of g: requests whose
// Host (or Origin, when present) is not a loopback name with port are
// answered 403, those without "Authorization: Bearer token" 401 (both
// closing their connection); no CORS header is ever sent; a body must
// arrive within the limits' BodyTimeout, and an initialize past
// MaxSessions is answered 503. token "" turns the token check off (tests
// only: the caller must bind a loopback address).
func (g *Gateway) HTTPHandler(token, port string) http.Handler {
	return g.srv.HTTPHandler(g.httpOptions(token, port))
}

// ServeHTTPOptions are the options of ServeHTTPWith.
type ServeHTTPOptions struct {
	// Token is the bearer token every request must carry; "" turns the
	// check off (tests only: ln must be loopback).
	Token string
	// TokenHint is the message of a 401: where the token is (a file
	// path), never the token. "" means a generic message.
	TokenHint string
}

// ServeHTTPWith is ServeHTTP with o: a request without o.Token is
// answered 401 with a JSON-RPC error whose message is o.TokenHint and no
// OAuth resource metadata (so clients do not begin an OAuth flow).
func (g *Gateway) ServeHTTPWith(ctx context.Context, ln net.Listener, o ServeHTTPOptions) error {
	ho := g.httpOptions(o.Token, "")
	ho.TokenHint = o.TokenHint
	return g.srv.ServeHTTP(ctx, ln, ho)
}

// ServeHTTP serves g's HTTPHandler at /mcp on ln (a loopback listener)
// with GatewayOptions.HTTP's limits — connections, headers, idle
// connections, besides those of HTTPHandler — until ctx ends; then it
// closes ln and every connection (in-flight requests get 2 s) and returns
// nil. It returns ln's error otherwise.
func (g *Gateway) ServeHTTP(ctx context.Context, ln net.Listener, token string) error {
	return g.srv.ServeHTTP(ctx, ln, g.httpOptions(token, ""))
}

// httpOptions are the mcpserve options of g's limits.
func (g *Gateway) httpOptions(token, port string) mcpserve.HTTPOptions {
	l := g.http
	return mcpserve.HTTPOptions{Token: token, Port: port, MaxSessions: l.MaxSessions, SessionIdleTimeout: l.SessionIdleTimeout,
		BodyTimeout: l.BodyTimeout, MaxConnections: l.MaxConnections, IdleTimeout: l.IdleTimeout, HeaderTimeout: l.HeaderTimeout}
}

// ToolNames returns the names of the tools offered now, sorted.
func (g *Gateway) ToolNames() []string { return g.srv.ToolNames() }

// Close stops following the Fleet and ends the startup wait. It is
// idempotent.
func (g *Gateway) Close() {
	g.stopReady()
	g.srv.Close()
	g.flushAudit()
}

// waitStartup returns when the startup wait is over (see
// GatewayOptions.StartupWait) or ctx ends.
func (g *Gateway) waitStartup(ctx context.Context) {
	select {
	case <-g.ready:
	case <-ctx.Done():
	}
}

// Ready returns a channel closed once the startup wait is over: every
// server's first connect ended, or GatewayOptions.StartupWait passed (at
// once when it is 0).
func (g *Gateway) Ready() <-chan struct{} { return g.ready }

// serverState returns the state of server now (StateUnknown when the
// Fleet has no such server).
func (g *Gateway) serverState(server string) State {
	for _, r := range g.f.Servers() {
		if r.Name == server {
			return r.State
		}
	}
	return StateUnknown
}

// notConnected reports whether err says the server had no session, so
// nothing was sent (supervisor.ReasonServerUnavailable).
func notConnected(err error) bool {
	var re *refusal.Error
	return errors.As(err, &re) && re.Class == refusal.Transient && re.Reason == supervisor.ReasonServerUnavailable
}

// whenConnected runs do and, while it fails because server had no
// usable session (nothing was sent: supervisor.ReasonServerUnavailable) and
// the server is connecting or about to (not failed, not closed), runs it
// again at each change of the Fleet, at most GatewayOptions.ReconnectWait
// in all and while ctx lasts. Only such a failure is tried again: a
// request that may have reached the server is never re-sent.
func whenConnected[T any](ctx context.Context, g *Gateway, server string, do func() (T, error)) (T, error) {
	var timeout <-chan time.Time
	for {
		gen := g.f.Current()
		r, err := do()
		if !notConnected(err) || g.reconnect <= 0 || gen.Changed == nil {
			return r, err
		}
		if st := g.serverState(server); st != StateConnecting && st != StateConnected {
			return r, err
		}
		if timeout == nil {
			t := time.NewTimer(g.reconnect)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-gen.Changed:
		case <-timeout:
			return r, err
		case <-ctx.Done():
			return r, err
		}
	}
}

// gatewayBackend is the mcpserve.Backend of a Gateway.
type gatewayBackend struct{ g *Gateway }

// Catalog is the current generation's tools, prompts and resources (of
// g.only alone when set), plus the status tool.
func (b gatewayBackend) Catalog() mcpserve.Catalog {
	g := b.g
	gen := g.f.Current()
	cat := mcpserve.Catalog{Changed: gen.Changed}
	routes := map[string]route{}
	if gen.Set != nil {
		g.clock.observe(gen.Set.Catalogs(), g.now())
		for _, c := range gen.Set.Catalogs() {
			if g.only != "" && c.Server != g.only {
				continue
			}
			for _, t := range c.Tools {
				name := t.HostName()
				if g.only != "" {
					name = t.NameOnServer()
				} else if _, ok := gen.Set.Tool(name); !ok {
					continue // a name collision across servers: in the rejected bucket
				}
				spec := t.Spec()
				cat.Tools = append(cat.Tools, mcpserve.Tool{Name: name, Title: spec.Title, Description: spec.Description,
					InputSchema: spec.InputSchema, ServerInputSchema: spec.ServerInputSchema, OutputSchema: spec.OutputSchema,
					Annotations: annotationsJSON(spec.Annotations)})
				routes[name] = route{server: c.Server, tool: t.NameOnServer()}
			}
			for _, p := range c.Prompts {
				name := p.HostName()
				if g.only != "" {
					name = p.NameOnServer()
				}
				if _, dup := routes["prompt:"+name]; dup {
					continue // the first of equal names is the one offered
				}
				cat.Prompts = append(cat.Prompts, mcpserve.Prompt{Name: name, Title: p.Title(), Description: p.Description(), Arguments: p.Arguments()})
				routes["prompt:"+name] = route{server: c.Server, tool: p.NameOnServer()}
			}
			for _, r := range c.Resources {
				if _, dup := routes["resource:"+r.URI()]; dup {
					continue
				}
				cat.Resources = append(cat.Resources, mcpserve.Resource{URI: r.URI(), Name: r.Name(), Title: r.Title(),
					Description: r.Description(), MIMEType: r.MIMEType(), Size: r.Size()})
				routes["resource:"+r.URI()] = route{server: c.Server, tool: r.URI()}
			}
			for _, t := range c.ResourceTemplates {
				key := "template:" + t.URITemplate()
				if _, dup := routes[key]; dup || templatePrefix(t.URITemplate()) == "" {
					continue
				}
				cat.Templates = append(cat.Templates, mcpserve.Template{URITemplate: t.URITemplate(), Name: t.Name(), Title: t.Title(),
					Description: t.Description(), MIMEType: t.MIMEType()})
				routes[key] = route{server: c.Server, tool: t.URITemplate()}
			}
		}
	}
	if _, taken := routes[StatusToolName]; !taken {
		cat.Tools = append(cat.Tools, mcpserve.Tool{Name: StatusToolName, Title: "mcpward: servers' state",
			Description: "Reports the state of each MCP server mcpward fronts (connected, connecting, failed, refused, denied, ...) and, for one that is not usable, the reason word.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
			Annotations: json.RawMessage(`{"readOnlyHint":true,"openWorldHint":false}`)})
	}
	g.mu.Lock()
	g.routes = routes
	g.mu.Unlock()
	return cat
}

// routeOf returns where the offered name key goes.
func (g *Gateway) routeOf(key string) (route, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r, ok := g.routes[key]
	return r, ok
}

// CallTool forwards a call and audits it.
func (b gatewayBackend) CallTool(ctx context.Context, name string, args json.RawMessage) (ports.ToolResult, error) {
	g := b.g
	rt, ok := g.routeOf(name)
	if !ok {
		if name == StatusToolName {
			return g.status(), nil
		}
		return ports.ToolResult{}, &refusal.Error{Class: refusal.Config, Reason: ReasonUnknownTool,
			Detail: "no tool of that name is offered"}
	}
	start := g.now()
	id := g.calls.next()
	durable := g.auditStart(rt, id, len(args))
	r, err := whenConnected(ctx, g, rt.server, func() (ports.ToolResult, error) { return g.f.CallServerTool(ctx, rt.server, rt.tool, args) })
	if durable != nil {
		if aerr := <-durable; aerr != nil {
			g.log.Warn("mcpward serve: the audit record of a call could not be appended", "server", rt.server)
		}
	}
	handed := false
	if ir := ports.InputRoundOf(ctx); ir != nil && err == nil && len(ir.Requests) > 0 {
		handed = true // the upstream asked: the round goes back to the client
	}
	g.auditOutcome(rt, id, g.now().Sub(start), len(args), r, err, handed)
	return r, err
}

// callIDs numbers a Gateway's forwarded calls: a random prefix per
// Gateway (so that the ids of two processes on one log do not collide)
// and a counter.
type callIDs struct {
	prefix string
	n      atomic.Uint64
}

// next returns the id of a new call: "<prefix>.<n>".
func (c *callIDs) next() string {
	return c.prefix + "." + strconv.FormatUint(c.n.Add(1), 10)
}

// newCallIDs returns a numbering with a random prefix of 8 hex digits.
func newCallIDs() *callIDs {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &callIDs{prefix: hex.EncodeToString(b[:])}
}

// auditStart starts appending the record that call id began (its server,
// tool and argument size; Outcome "started") and returns at once: the
// channel gets the append's outcome once the record is durable (nil
// channel without an audit log). The append runs while the call is
// forwarded, so its fsync overlaps the upstream round trip; CallTool
// waits for it before it returns the result.
func (g *Gateway) auditStart(rt route, id string, argBytes int) <-chan error {
	al := g.f.host.audit
	if al == nil {
		return nil
	}
	rec := ports.AuditRecord{Time: g.now(), Action: ports.AuditCall, Identity: ports.Identity{ServerID: rt.server},
		Outcome: "started", Reason: "call=" + id + " tool=" + rt.tool + " args_bytes=" + strconv.Itoa(argBytes), Actor: "serve"}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), auditTimeout)
		defer cancel()
		done <- al.Append(ctx, rec)
	}()
	return done
}

// auditOutcome records how call id ended, never its arguments or result,
// only their sizes, without waiting for the record to be durable: with a
// ports.AuditQueue it is enqueued (written with the log's next group
// commit: the next call's start record, or the store's own write within
// milliseconds), otherwise appended by a goroutine Close waits for. The
// call's start record is durable already, so the outcome follows it.
// handed says the upstream answered with questions (an input_required
// round handed on to the client): Outcome "input_required", not a result.
func (g *Gateway) auditOutcome(rt route, id string, d time.Duration, argBytes int, r ports.ToolResult, err error, handed bool) {
	al := g.f.host.audit
	if al == nil {
		return
	}
	outcome, reason := "ok", ""
	switch {
	case err != nil:
		outcome, reason = "refused", "error"
		var re *refusal.Error
		if errors.As(err, &re) {
			reason = re.Reason
		}
	case handed:
		outcome = "input_required"
	case r.IsError:
		outcome = "tool_error"
	}
	rec := ports.AuditRecord{Time: g.now(), Action: ports.AuditCall, Identity: ports.Identity{ServerID: rt.server},
		Outcome: outcome, Reason: outcomeFacts(id, rt.tool, d.Milliseconds(), argBytes, len(r.Content), reason), Actor: "serve"}
	if q, ok := al.(ports.AuditQueue); ok {
		if aerr := q.Enqueue(rec); aerr != nil {
			g.log.Warn("mcpward serve: the audit record of a call's outcome could not be appended", "server", rt.server)
		}
		return
	}
	g.outcomes.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), auditTimeout)
		defer cancel()
		if aerr := al.Append(ctx, rec); aerr != nil {
			g.log.Warn("mcpward serve: the audit record of a call's outcome could not be appended", "server", rt.server)
		}
	})
}

// outcomeFacts is the Reason of a call's outcome record:
// "call=ID tool=TOOL ms=MS args_bytes=N result_bytes=N", then
// " reason=WORD" when reason is not "" (written without fmt's
// reflection).
func outcomeFacts(id, tool string, ms int64, argBytes, resultBytes int, reason string) string {
	b := make([]byte, 0, 80+len(id)+len(tool)+len(reason))
	b = append(append(append(b, "call="...), id...), " tool="...)
	b = strconv.AppendInt(append(append(b, tool...), " ms="...), ms, 10)
	b = strconv.AppendInt(append(b, " args_bytes="...), int64(argBytes), 10)
	b = strconv.AppendInt(append(b, " result_bytes="...), int64(resultBytes), 10)
	if reason != "" {
		b = append(append(b, " reason="...), reason...)
	}
	return string(b)
}

// flushAudit makes every outcome record durable (Close).
func (g *Gateway) flushAudit() {
	g.outcomes.Wait()
	q, ok := g.f.host.audit.(ports.AuditQueue)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), auditTimeout)
	defer cancel()
	if err := q.Flush(ctx); err != nil {
		g.log.Warn("mcpward serve: the audit records of calls' outcomes could not all be written")
	}
}

// GetPrompt forwards a prompts/get.
func (b gatewayBackend) GetPrompt(ctx context.Context, name string, args map[string]string) (ports.PromptResult, error) {
	rt, ok := b.g.routeOf("prompt:" + name)
	if !ok {
		return ports.PromptResult{}, refusal.New(refusal.Config, ReasonUnknownPrompt, "")
	}
	return whenConnected(ctx, b.g, rt.server, func() (ports.PromptResult, error) { return b.g.f.GetPrompt(ctx, rt.server, rt.tool, args) })
}

// ReadResource forwards a resources/read.
func (b gatewayBackend) ReadResource(ctx context.Context, uri string) (ports.ReadResult, error) {
	rt, ok := b.g.routeOf("resource:" + uri)
	if !ok {
		return ports.ReadResult{}, refusal.New(refusal.Config, "unknown_resource", "")
	}
	return whenConnected(ctx, b.g, rt.server, func() (ports.ReadResult, error) { return b.g.f.ReadResource(ctx, rt.server, rt.tool) })
}

// templatePrefix is the literal start of a URI template up to its first
// expression when that start holds the scheme and the whole authority
// ("scheme://host/"), or "" (the template is not offered: a read could
// not be held to the template's origin).
func templatePrefix(tpl string) string {
	i := strings.IndexByte(tpl, '{')
	if i < 0 {
		i = len(tpl)
	}
	lit := tpl[:i]
	scheme, rest, ok := strings.Cut(lit, "://")
	if !ok || scheme == "" {
		return ""
	}
	if _, _, ok := strings.Cut(rest, "/"); !ok {
		return ""
	}
	return lit
}

// ReadTemplate forwards a read of uri, which the SDK matched to the
// template uriTemplate: refused (Class Refused, "template_origin_mismatch")
// unless uri starts with the template's literal origin and path.
func (b gatewayBackend) ReadTemplate(ctx context.Context, uriTemplate, uri string) (ports.ReadResult, error) {
	rt, ok := b.g.routeOf("template:" + uriTemplate)
	if !ok {
		return ports.ReadResult{}, refusal.New(refusal.Config, ReasonUnknownTemplate, "")
	}
	if p := templatePrefix(uriTemplate); p == "" || !strings.HasPrefix(uri, p) {
		return ports.ReadResult{}, refusal.New(refusal.Refused, "template_origin_mismatch", rt.server)
	}
	return whenConnected(ctx, b.g, rt.server, func() (ports.ReadResult, error) { return b.g.f.ReadResource(ctx, rt.server, uri) })
}

// serverOfURI returns the server of a resource or of the template whose
// literal prefix uri starts with, or "".
func (g *Gateway) serverOfURI(uri string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if r, ok := g.routes["resource:"+uri]; ok {
		return r.server
	}
	for k, r := range g.routes {
		if tpl, ok := strings.CutPrefix(k, "template:"); ok {
			if p := templatePrefix(tpl); p != "" && strings.HasPrefix(uri, p) {
				return r.server
			}
		}
	}
	return ""
}

// Subscribe forwards a resources/subscribe to the server of uri.
func (b gatewayBackend) Subscribe(ctx context.Context, uri string) error {
	server := b.g.serverOfURI(uri)
	if server == "" {
		return refusal.New(refusal.Config, "unknown_resource", "")
	}
	return b.g.f.Subscribe(ctx, server, uri)
}

// Unsubscribe forwards a resources/unsubscribe to the server of uri.
func (b gatewayBackend) Unsubscribe(ctx context.Context, uri string) error {
	server := b.g.serverOfURI(uri)
	if server == "" {
		return refusal.New(refusal.Config, "unknown_resource", "")
	}
	return b.g.f.Unsubscribe(ctx, server, uri)
}

// Complete forwards a completion/complete of an offered prompt or
// template.
func (b gatewayBackend) Complete(ctx context.Context, ref ports.CompletionRef, arg, value string, resolved map[string]string) (ports.Completion, error) {
	key := "prompt:" + ref.Name
	if ref.Type == ports.CompletionRefResource {
		key = "template:" + ref.Name
	}
	rt, ok := b.g.routeOf(key)
	if !ok {
		return ports.Completion{}, refusal.New(refusal.Config, "completion_ref_invalid", "")
	}
	return b.g.f.Complete(ctx, rt.server, ports.CompletionRef{Type: ref.Type, Name: rt.tool}, arg, value, resolved)
}

// ResourceUpdated passes u (from the supervisors' OnResourceUpdated) to
// the clients subscribed to its URI.
func (g *Gateway) ResourceUpdated(u ports.ResourceUpdate) {
	ctx, cancel := context.WithTimeout(context.Background(), auditTimeout)
	defer cancel()
	g.srv.ResourceUpdated(ctx, u.URI)
}

// StatusLine is one server's line of the status tool: "NAME: STATE",
// then " (CLASS REASON)" when it has a failure or an evaluation reason.
func StatusLine(r ServerStatus) string {
	line := r.Name + ": " + string(r.State)
	switch {
	case r.Class != refusal.None && r.Reason != "":
		line += " (" + r.Class.String() + " " + r.Reason + ")"
	case r.Reason != "":
		line += " (" + r.Reason + ")"
	}
	return line
}

// status is the status tool's result: one line per server (of g.only
// alone when set).
func (g *Gateway) status() ports.ToolResult {
	var lines []string
	for _, r := range g.f.Servers() {
		if g.only != "" && r.Name != g.only {
			continue
		}
		lines = append(lines, StatusLine(r))
	}
	text := "no servers"
	if len(lines) > 0 {
		text = strings.Join(lines, "\n")
	}
	content, _ := json.Marshal([]map[string]string{{"type": "text", "text": text}})
	return ports.ToolResult{Content: content}
}

// ReasonElicitationUnavailable is the reason (Class Unsupported) of a
// server's question a GatewayElicitor cannot put to a client: no Gateway
// bound yet, not exactly one client connected, or the client did not
// declare elicitation; for a client on 2026-07-28 or later, also not
// exactly one call of that server running, or too many calls waiting for
// an answer (mcpserve.Server.Elicit).
const ReasonElicitationUnavailable = "elicitation_unavailable"

// GatewayElicitor passes the servers' elicitation questions to the one
// client of a Gateway serving stdio. Give it as the Elicitor of
// ConnectOptions.Elicitation when connecting the Fleet, then Bind the
// Gateway made of it. Safe for concurrent use.
type GatewayElicitor struct {
	mu sync.Mutex
	g  *Gateway
}

// Bind makes e ask g's client.
func (e *GatewayElicitor) Bind(g *Gateway) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.g = g
}

// Elicit implements ports.Elicitor: the bound Gateway's one client's
// answer, or a *refusal.Error of Class Unsupported,
// ReasonElicitationUnavailable (or Transient "elicitation_failed" when
// the client's reply did not come back as an answer).
func (e *GatewayElicitor) Elicit(ctx context.Context, r ports.ElicitRequest) (ports.ElicitResult, error) {
	e.mu.Lock()
	g := e.g
	e.mu.Unlock()
	if g == nil {
		return ports.ElicitResult{}, refusal.New(refusal.Unsupported, ReasonElicitationUnavailable, r.ServerID)
	}
	res, err := g.srv.Elicit(ctx, r)
	switch {
	case errors.Is(err, mcpserve.ErrNoElicitingClient):
		return ports.ElicitResult{}, refusal.New(refusal.Unsupported, ReasonElicitationUnavailable, r.ServerID)
	case err != nil:
		g.log.Warn("mcpward serve: a server's question could not be put to the client", "server", r.ServerID, "err", err)
		return ports.ElicitResult{}, refusal.New(refusal.Transient, "elicitation_failed", r.ServerID)
	}
	return res, nil
}

// annotationsJSON is a as the protocol's tool annotations object, nil when
// a is nil. The hints pass downstream as the server gave them: they stay
// the server's claims, not mcpward's.
func annotationsJSON(a *ports.ToolAnnotations) json.RawMessage {
	if a == nil {
		return nil
	}
	b, err := json.Marshal(struct {
		Title           string `json:"title,omitempty"`
		ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
		DestructiveHint *bool  `json:"destructiveHint,omitempty"`
		IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
		OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
	}{a.Title, a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint})
	if err != nil {
		return nil
	}
	return b
}
