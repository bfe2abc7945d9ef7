// Package mcpserve is the server side of MCP for a host that fronts other
// servers: one go-sdk server whose tools, prompts and resources are those
// a Backend offers, kept current as the Backend's catalog changes, served
// over stdio or Streamable HTTP.
//
// Every definition a Backend offers is checked before it reaches the SDK
// (whose registration panics on, for example, an input schema that is not
// an object): a tool whose schema is not a JSON object of type "object",
// or that the SDK refuses anyway, is left out and counted (see
// Server.Skipped), never a panic.
//
// The text of a definition is the fronted server's, so it is handed to
// clients under mcpward's one rule (core/textsafe): every name, title,
// description, prompt argument's name, title and description, MIME type,
// and every "title" and "description" in a tool's schemas, has its control
// characters (C0, C1, and so escape sequences such as OSC 52), its
// bidirectional and invisible characters replaced by visible escapes
// (newlines are kept in descriptions), and is cut with a visible marker
// past Options.MaxDescription (8 KiB) or Options.MaxTitle. A name the rule
// changes is offered changed and called by the fronted server's own name;
// two names that become one offer the first. A resource or template whose
// URI the rule would change is left out (a URI cannot be rewritten).
// Schema property names and values pass as they are (a client sends them
// back). A tool's result passes as the server sent it, cut by the Backend
// (Backend.CallTool); a result the Backend cut (ports.ToolResult.Truncated)
// ends in a text block saying so, and its _meta holds "mcpward/truncated":
// true.
package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/ports"
)

// discard is the Logger of a Server without one.
var discard = slog.New(slog.DiscardHandler)

// Tool is one tool offered downstream.
type Tool struct {
	// Name is the name downstream clients call it by.
	Name        string
	Title       string
	Description string
	// InputSchema must be a JSON object with "type": "object"; a tool
	// whose schema is not is left out. It is what the Backend validates
	// arguments against (the narrowed schema).
	InputSchema json.RawMessage
	// ServerInputSchema, when it is a JSON object with "type": "object",
	// is offered to clients in place of InputSchema: the schema as the
	// server wrote it (JSON Schema 2020-12 keywords, $defs, composition,
	// x-mcp-header annotations), bounded by whoever built it (the
	// catalog). It is registered as raw JSON: nothing in it is resolved
	// or dereferenced, a $ref is never fetched. Its x-mcp-header
	// annotations are checked as the SDK registers the tool (when they
	// break its rules, InputSchema is offered instead) and, over HTTP, each
	// Mcp-Param header a client sends is checked against the arguments.
	// Empty, or not an object schema: InputSchema is offered.
	ServerInputSchema json.RawMessage
	// OutputSchema, when not empty, must be a JSON object.
	OutputSchema json.RawMessage
	// Annotations, when not empty, are the tool's annotations as JSON
	// (readOnlyHint, ...); they pass as given.
	Annotations json.RawMessage
}

// Prompt is one prompt offered downstream.
type Prompt struct {
	Name        string
	Title       string
	Description string
	Arguments   []ports.PromptArgument
}

// Resource is one resource offered downstream, read by its URI.
type Resource struct {
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string
	Size        int64
}

// Template is one resource template offered downstream; a read of a URI
// it matches goes to Backend.ReadTemplate.
type Template struct {
	URITemplate string
	Name        string
	Title       string
	Description string
	MIMEType    string
}

// Catalog is what a Backend offers at one time.
type Catalog struct {
	Tools     []Tool
	Prompts   []Prompt
	Resources []Resource
	Templates []Template
	// Changed is closed when a newer Catalog replaces this one; nil means
	// never (the Server then stops following).
	Changed <-chan struct{}
}

// Backend is what a Server serves. Its methods may be called concurrently.
type Backend interface {
	// Catalog returns what is offered now; it must not block on a server.
	Catalog() Catalog
	// CallTool calls the tool offered as name. An error is handed to the
	// client as a tool result with isError set and the error's text: it
	// must hold nothing secret (a *refusal.Error does not). A ctx from
	// ports.WithProgress carries the client's progress token.
	CallTool(ctx context.Context, name string, args json.RawMessage) (ports.ToolResult, error)
	// GetPrompt gets the prompt offered as name.
	GetPrompt(ctx context.Context, name string, args map[string]string) (ports.PromptResult, error)
	// ReadResource reads the resource offered under uri.
	ReadResource(ctx context.Context, uri string) (ports.ReadResult, error)
	// ReadTemplate reads uri, which matches the template offered as
	// uriTemplate.
	ReadTemplate(ctx context.Context, uriTemplate, uri string) (ports.ReadResult, error)
	// Subscribe and Unsubscribe ask for (or end) updates of uri; the host
	// passes each update to Server.ResourceUpdated.
	Subscribe(ctx context.Context, uri string) error
	Unsubscribe(ctx context.Context, uri string) error
	// Complete completes argument arg of ref (a prompt by its offered
	// name, or a template by its URI template) from value.
	Complete(ctx context.Context, ref ports.CompletionRef, arg, value string, resolved map[string]string) (ports.Completion, error)
}

// Options configure a Server; nil means the defaults.
type Options struct {
	// Name and Version are the server's implementation info; "" means
	// "mcpward" and "dev".
	Name, Version string
	// Instructions are the server's instructions to clients; "" none.
	Instructions string
	// Logger receives the SDK's own logs and the tools left out; nil
	// discards them.
	Logger *slog.Logger
	// InputTimeout bounds the wait for a client's retry with the answer to
	// a question handed in an input-required result (mrtr.go); 0 means
	// DefaultInputTimeout.
	InputTimeout time.Duration
	// MaxPendingInputs caps the calls waiting for such an answer at once;
	// 0 means DefaultMaxPendingInputs.
	MaxPendingInputs int
	// MaxDescription caps, in bytes, each description handed to clients
	// (see the package doc): a longer one is cut with a visible marker. 0
	// means DefaultMaxDescription; it is never below textsafe.MinClip.
	MaxDescription int
	// MaxTitle caps each name, title and MIME type likewise; 0 means
	// DefaultMaxTitle.
	MaxTitle int
	// StdioTransport, when set, builds the transport ServeStdio serves a
	// client over, from its in and out (stdiotransport.ServerTransport
	// frames and decodes lines without the SDK's per-message decoder);
	// nil means the SDK's mcp.IOTransport.
	StdioTransport func(in io.ReadCloser, out io.WriteCloser) mcp.Transport
	// Ready, when set, is waited for before a list request (tools/list,
	// prompts/list, resources/list, resources/templates/list) and before a
	// tools/call, prompts/get or resources/read of a name or URI not
	// offered now is answered: it returns once the Backend's catalog is
	// worth answering with (its servers connected, or the host gave up
	// waiting) or ctx ends. The Backend's catalog is then registered again
	// before the request is answered. It must be bounded and cheap once
	// ready (it runs on every such request); nil answers at once.
	Ready func(ctx context.Context)
	// Observer, when non-nil, is told of every request a client sends
	// (observe.go): the host's telemetry. nil observes nothing. It wraps
	// Ready's wait: a request's span and duration include it.
	Observer Observer
}

// Server is one MCP server fronting a Backend. It is safe for concurrent
// use; Close stops following the Backend.
type Server struct {
	b   Backend
	srv *mcp.Server
	log *slog.Logger

	text text // the rule for what the fronted servers wrote (sanitize.go)

	mu        sync.Mutex
	tools     map[string]offered // the Backend's name → what is registered
	prompts   map[string]offered
	resources map[string]string // URI → the JSON registered
	templates map[string]string
	skipped   int
	synced    chan struct{} // closed after the first sync

	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}

	logq        chan LogMessage // Log's queue (logs.go)
	logsDropped int             // under mu
	logsDone    chan struct{}

	in   *inputs // multi round-trip calls (mrtr.go)
	seal *sealer // rounds handed on (handon.go)

	stdio func(io.ReadCloser, io.WriteCloser) mcp.Transport // Options.StdioTransport

	// fastCall is the SDK server's receiving middleware around
	// fastCallBase: what a tools/call taken at the stdio connection runs
	// (fastcall.go). noFast leaves every call to the SDK (tests).
	fastCall  mcp.MethodHandler
	noFast    bool
	fastTaken atomic.Int64        // calls the fast path took
	impl      *mcp.Implementation // the server's, as the SDK has it
	resFrames resultFrames        // encodeText's frames (fastencode.go)
	// toolByName (under mu) is tools the other way round: the name
	// offered → the Backend's.
	toolByName map[string]string

	// syncMu makes reading the Backend's catalog and registering it one
	// step, so an older catalog never replaces a newer one.
	syncMu sync.Mutex
}

// offered is one registered tool or prompt: the key of what was
// registered, and the name it is offered under.
type offered struct{ key, name string }

// New returns a Server of b with opts, its catalog registered once, and
// starts following b's changes (until Close): each change re-registers
// what changed, and the SDK tells every connected client
// notifications/tools/list_changed (or prompts', resources').
func New(b Backend, opts *Options) *Server {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = "mcpward"
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	log := o.Logger
	if log == nil {
		log = discard
	}
	if o.MaxDescription <= 0 {
		o.MaxDescription = DefaultMaxDescription
	}
	if o.MaxTitle <= 0 {
		o.MaxTitle = DefaultMaxTitle
	}
	s := &Server{b: b, log: log, text: text{maxDesc: o.MaxDescription, maxTitle: o.MaxTitle},
		tools: map[string]offered{}, prompts: map[string]offered{}, resources: map[string]string{},
		templates: map[string]string{}, stop: make(chan struct{}), done: make(chan struct{}), synced: make(chan struct{}),
		logq: make(chan LogMessage, MaxLogQueue), logsDone: make(chan struct{}), in: newInputs(o.InputTimeout, o.MaxPendingInputs),
		seal: newSealer(nil), stdio: o.StdioTransport}
	s.impl = &mcp.Implementation{Name: o.Name, Version: o.Version}
	s.srv = mcp.NewServer(s.impl, &mcp.ServerOptions{
		Instructions: o.Instructions,
		Logger:       log,
		// Declared whatever the first catalog holds: servers connect in
		// the background and may bring prompts and resources later.
		Capabilities: &mcp.ServerCapabilities{
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Prompts:     &mcp.PromptCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Completions: &mcp.CompletionCapabilities{},
			// The fronted servers' log messages (Server.Log); the SDK
			// handles logging/setLevel and filters by each client's level.
			Logging: &mcp.LoggingCapabilities{},
		},
		SubscribeHandler: func(ctx context.Context, r *mcp.SubscribeRequest) error {
			return b.Subscribe(ctx, r.Params.URI)
		},
		UnsubscribeHandler: func(ctx context.Context, r *mcp.UnsubscribeRequest) error {
			return b.Unsubscribe(ctx, r.Params.URI)
		},
		CompletionHandler: func(ctx context.Context, r *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return complete(ctx, b, r)
		},
		// Caching hints (protocol 2026-07-28 and later): the Backend's
		// (CacheHints), or stale at once and the requesting user's alone.
		SetCacheable: func(_ context.Context, r mcp.Request, c *mcp.Cacheable) {
			c.TTLMs, c.CacheScope = cacheHint(b, r)
		},
	})
	// The same middleware, in the same order, wraps the calls the stdio
	// connection takes itself (fastcall.go).
	s.fastCall = s.fastCallBase
	if o.Ready != nil {
		s.srv.AddReceivingMiddleware(s.waitReady(o.Ready))
		s.fastCall = s.waitReady(o.Ready)(s.fastCall)
	}
	if o.Observer != nil {
		// Added last: the outermost middleware.
		s.srv.AddReceivingMiddleware(observe(o.Observer))
		s.fastCall = observe(o.Observer)(s.fastCall)
	}
	cat := s.resync()
	close(s.synced)
	go s.follow(cat.Changed)
	go s.deliverLogs()
	return s
}

// follow re-registers b's catalog on every change until Close.
func (s *Server) follow(changed <-chan struct{}) {
	defer close(s.done)
	for changed != nil {
		select {
		case <-changed:
		case <-s.stop:
			return
		}
		changed = s.resync().Changed
	}
}

// resync reads the Backend's catalog and registers it, as one step.
func (s *Server) resync() Catalog {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	cat := s.b.Catalog()
	s.sync(cat)
	return cat
}

// waitReady is the middleware of Options.Ready: a list request, and a
// call, get or read of something not offered now, waits for ready, then
// the catalog is registered again before the request is handled.
func (s *Server) waitReady(ready func(context.Context)) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if s.waits(method, req) {
				ready(ctx)
				s.resync()
			}
			return next(ctx, method, req)
		}
	}
}

// waits reports whether the request req of method waits for Ready.
func (s *Server) waits(method string, req mcp.Request) bool {
	switch method {
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
		return true
	case "tools/call":
		r, ok := req.(*mcp.CallToolRequest)
		return ok && r.Params != nil && !s.offers(s.tools, r.Params.Name)
	case "prompts/get":
		r, ok := req.(*mcp.GetPromptRequest)
		return ok && r.Params != nil && !s.offers(s.prompts, r.Params.Name)
	case "resources/read":
		r, ok := req.(*mcp.ReadResourceRequest)
		if !ok || r.Params == nil {
			return false
		}
		s.mu.Lock()
		_, known := s.resources[r.Params.URI]
		s.mu.Unlock()
		return !known
	}
	return false
}

// offers reports whether one of m's entries is offered as name.
func (s *Server) offers(m map[string]offered, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range m {
		if o.name == name {
			return true
		}
	}
	return false
}

// Close stops following the Backend and passing log messages, and ends
// the calls waiting for a client's answer (mrtr.go); it does not close
// sessions (end their Serve calls for that). It is idempotent.
func (s *Server) Close() {
	s.stopOnce.Do(func() { close(s.stop) })
	<-s.done
	<-s.logsDone
	s.in.closeAll()
}

// Skipped returns how many definitions (tools, prompts, resources) were
// left out so far because they could not be served.
func (s *Server) Skipped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.skipped
}

// ToolNames returns the names the tools registered now are offered under,
// sorted.
func (s *Server) ToolNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.tools))
	for _, o := range s.tools {
		names = append(names, o.name)
	}
	slices.Sort(names)
	return names
}

// sync registers cat: what is new or changed is added, what is gone
// removed.
func (s *Server) sync(cat Catalog) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.syncTools(cat.Tools)
	s.syncPrompts(cat.Prompts)
	s.syncResources(cat.Resources)
	s.syncTemplates(cat.Templates)
}

func (s *Server) syncTemplates(templates []Template) {
	want := map[string]bool{}
	for _, t := range templates {
		key, err := json.Marshal(t)
		if err != nil || want[t.URITemplate] || t.URITemplate == "" {
			continue
		}
		if !safeURI(t.URITemplate) {
			s.skipped++
			s.log.Warn("mcpserve: resource template left out", "reason", "unsafe_uri")
			continue
		}
		want[t.URITemplate] = true
		if s.templates[t.URITemplate] == string(key) {
			continue
		}
		x := s.text
		mt := &mcp.ResourceTemplate{URITemplate: t.URITemplate, Name: x.line(t.Name), Title: x.line(t.Title), Description: x.desc(t.Description), MIMEType: x.line(t.MIMEType)}
		if mt.Name == "" {
			mt.Name = t.URITemplate
		}
		tpl := t.URITemplate
		h := func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			r, err := s.b.ReadTemplate(ctx, tpl, req.Params.URI)
			if err != nil {
				return nil, err
			}
			return readResult(r), nil
		}
		if err := guard(func() { s.srv.AddResourceTemplate(mt, h) }); err != nil {
			s.skipped++
			want[t.URITemplate] = false
			continue
		}
		s.templates[t.URITemplate] = string(key)
	}
	var gone []string
	for n := range s.templates {
		if !want[n] {
			gone = append(gone, n)
			delete(s.templates, n)
		}
	}
	if len(gone) > 0 {
		s.srv.RemoveResourceTemplates(gone...)
	}
}

// ResourceUpdated tells the clients subscribed to uri that it changed.
func (s *Server) ResourceUpdated(ctx context.Context, uri string) {
	_ = s.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
}

// complete forwards a completion/complete.
func complete(ctx context.Context, b Backend, r *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := r.Params
	if p == nil || p.Ref == nil || p.Argument.Name == "" {
		return nil, fmt.Errorf("mcpward: an incomplete completion request")
	}
	ref := ports.CompletionRef{Type: p.Ref.Type, Name: p.Ref.Name}
	if p.Ref.Type == ports.CompletionRefResource {
		ref.Name = p.Ref.URI
	}
	var resolved map[string]string
	if p.Context != nil {
		resolved = p.Context.Arguments
	}
	c, err := b.Complete(ctx, ref, p.Argument.Name, p.Argument.Value, resolved)
	if err != nil {
		return nil, err
	}
	vals := c.Values
	if vals == nil {
		vals = []string{}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: vals, Total: c.Total, HasMore: c.HasMore}}, nil
}

func (s *Server) syncTools(tools []Tool) {
	changed := false // s.tools changed: toolByName is built again
	want := map[string]bool{}
	taken := map[string]string{} // offered name → the Backend's
	for _, t := range tools {
		if want[t.Name] {
			continue
		}
		key := fmt.Sprintf("%q %q %q %q %q %q %q", t.Title, t.Description, t.InputSchema, t.ServerInputSchema, t.OutputSchema, t.Annotations, t.Name)
		name := s.text.line(t.Name)
		if other, dup := taken[name]; dup && other != t.Name {
			s.skipped++
			s.log.Warn("mcpserve: tool left out", "reason", "duplicate_offered_name")
			continue
		}
		want[t.Name] = true
		taken[name] = t.Name
		if s.tools[t.Name].key == key {
			continue
		}
		changed = true
		mt, err := s.sdkTool(t, name)
		if err == nil {
			if old, ok := s.tools[t.Name]; ok && old.name != name {
				s.srv.RemoveTools(old.name)
			}
			err = guard(func() { s.srv.AddTool(mt, s.toolHandler(t.Name)) })
			if err != nil && len(t.ServerInputSchema) > 0 {
				// The SDK refused the schema as written (its
				// x-mcp-header rules): the narrowed one is offered.
				t.ServerInputSchema = nil
				if mt, err = s.sdkTool(t, name); err == nil {
					err = guard(func() { s.srv.AddTool(mt, s.toolHandler(t.Name)) })
				}
			}
		}
		if err != nil {
			s.skipped++
			want[t.Name] = false
			delete(taken, name)
			s.log.Warn("mcpserve: tool left out", "reason", "invalid_tool_definition")
			if old, ok := s.tools[t.Name]; ok {
				s.srv.RemoveTools(old.name)
				delete(s.tools, t.Name)
			}
			continue
		}
		s.tools[t.Name] = offered{key: key, name: name}
	}
	var gone []string
	for n, o := range s.tools {
		if !want[n] {
			gone = append(gone, o.name)
			delete(s.tools, n)
		}
	}
	if len(gone) > 0 {
		s.srv.RemoveTools(gone...)
	}
	if s.toolByName == nil || len(s.toolByName) != len(s.tools) || changed {
		s.toolByName = make(map[string]string, len(s.tools))
		for n, o := range s.tools {
			s.toolByName[o.name] = n
		}
	}
}

func (s *Server) syncPrompts(prompts []Prompt) {
	want := map[string]bool{}
	taken := map[string]string{}
	x := s.text
	for _, p := range prompts {
		key, err := json.Marshal(p)
		if err != nil || want[p.Name] || p.Name == "" {
			continue
		}
		name := x.line(p.Name)
		if other, dup := taken[name]; dup && other != p.Name {
			s.skipped++
			s.log.Warn("mcpserve: prompt left out", "reason", "duplicate_offered_name")
			continue
		}
		want[p.Name] = true
		taken[name] = p.Name
		if s.prompts[p.Name].key == string(key) {
			continue
		}
		mp := &mcp.Prompt{Name: name, Title: x.line(p.Title), Description: x.desc(p.Description)}
		args := map[string]string{} // offered argument name → the server's
		for _, a := range p.Arguments {
			an := x.line(a.Name)
			if _, dup := args[an]; dup {
				continue
			}
			args[an] = a.Name
			mp.Arguments = append(mp.Arguments, &mcp.PromptArgument{Name: an, Title: x.line(a.Title), Description: x.desc(a.Description), Required: a.Required})
		}
		if old, ok := s.prompts[p.Name]; ok && old.name != name {
			s.srv.RemovePrompts(old.name)
		}
		if err := guard(func() { s.srv.AddPrompt(mp, s.promptHandler(p.Name, args)) }); err != nil {
			s.skipped++
			want[p.Name] = false
			delete(taken, name)
			if old, ok := s.prompts[p.Name]; ok {
				s.srv.RemovePrompts(old.name)
				delete(s.prompts, p.Name)
			}
			continue
		}
		s.prompts[p.Name] = offered{key: string(key), name: name}
	}
	var gone []string
	for n, o := range s.prompts {
		if !want[n] {
			gone = append(gone, o.name)
			delete(s.prompts, n)
		}
	}
	if len(gone) > 0 {
		s.srv.RemovePrompts(gone...)
	}
}

func (s *Server) syncResources(resources []Resource) {
	want := map[string]bool{}
	for _, r := range resources {
		key, err := json.Marshal(r)
		if err != nil || want[r.URI] || r.URI == "" {
			continue
		}
		if !safeURI(r.URI) {
			s.skipped++
			s.log.Warn("mcpserve: resource left out", "reason", "unsafe_uri")
			continue
		}
		want[r.URI] = true
		if s.resources[r.URI] == string(key) {
			continue
		}
		x := s.text
		mr := &mcp.Resource{URI: r.URI, Name: x.line(r.Name), Title: x.line(r.Title), Description: x.desc(r.Description), MIMEType: x.line(r.MIMEType), Size: r.Size}
		if mr.Name == "" {
			mr.Name = r.URI
		}
		if err := guard(func() { s.srv.AddResource(mr, s.resourceHandler(r.URI)) }); err != nil {
			s.skipped++
			want[r.URI] = false
			continue
		}
		s.resources[r.URI] = string(key)
	}
	var gone []string
	for n := range s.resources {
		if !want[n] {
			gone = append(gone, n)
			delete(s.resources, n)
		}
	}
	if len(gone) > 0 {
		s.srv.RemoveResources(gone...)
	}
}

// guard runs f, turning a panic of the SDK's registration into an error.
func guard(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("mcpserve: registration refused")
		}
	}()
	f()
	return nil
}

// sdkTool is t as the SDK's Tool offered as name, its text under the
// rule (sanitize.go), or an error when t cannot be served: an input schema
// that is not a JSON object of type "object", an output schema or
// annotations that are not JSON objects.
func (s *Server) sdkTool(t Tool, name string) (*mcp.Tool, error) {
	if t.Name == "" {
		return nil, fmt.Errorf("mcpserve: a tool without a name")
	}
	var in map[string]any
	if err := json.Unmarshal(t.InputSchema, &in); err != nil || in == nil || in["type"] != "object" {
		return nil, fmt.Errorf("mcpserve: the input schema is not an object schema")
	}
	offeredSchema := t.InputSchema
	if len(t.ServerInputSchema) > 0 {
		var written map[string]any
		if json.Unmarshal(t.ServerInputSchema, &written) == nil && written["type"] == "object" {
			offeredSchema = t.ServerInputSchema
		}
	}
	x := s.text
	mt := &mcp.Tool{Name: name, Title: x.line(t.Title), Description: x.desc(t.Description), InputSchema: x.schema(offeredSchema)}
	if len(t.OutputSchema) > 0 {
		var out map[string]any
		if err := json.Unmarshal(t.OutputSchema, &out); err != nil || out == nil {
			return nil, fmt.Errorf("mcpserve: the output schema is not an object")
		}
		mt.OutputSchema = x.schema(t.OutputSchema)
	}
	if len(t.Annotations) > 0 {
		var a mcp.ToolAnnotations
		if err := json.Unmarshal(t.Annotations, &a); err != nil {
			return nil, fmt.Errorf("mcpserve: the annotations are not an object")
		}
		a.Title = x.line(a.Title)
		mt.Annotations = &a
	}
	return mt, nil
}

// toolHandler forwards a tools/call of name to the Backend: the
// client's progress token rides in the ctx (ports.WithProgress), the
// client's cancel ends ctx.
func (s *Server) toolHandler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args json.RawMessage
		if req.Params != nil {
			args = req.Params.Arguments
			if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
				sess := req.Session
				ctx = ports.WithProgress(ctx, func(p ports.Progress) {
					_ = sess.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: tok, Progress: p.Progress, Total: p.Total, Message: p.Message})
				})
			}
		}
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		if multiRound(req) {
			return s.callRounds(ctx, name, args, req)
		}
		if modernClient(req.Session) {
			return s.callHanded(ctx, name, args, req)
		}
		// A client before 2026-07-28: an upstream's rounds are put to it
		// on this session (handon.go).
		var r ports.ToolResult
		refused, err := s.legacyRounds(ctx, req.Session, func(ctx context.Context, _ *ports.InputRound) (err error) {
			r, err = s.b.CallTool(ctx, name, args)
			return err
		})
		switch {
		case err != nil:
			return errorResult(err.Error()), nil
		case refused != "":
			return errorResult(refused), nil
		}
		return toResult(r), nil
	}
}

// errorResult is a tool result with isError set and text.
func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// TruncatedMeta is the _meta key of a result (tools/call, prompts/get,
// resources/read) the Backend cut to its admission cap: its value is true.
const TruncatedMeta = "mcpward/truncated"

// TruncatedNotice is the text block a tool result the Backend cut ends in.
const TruncatedNotice = "[mcpward: this result was cut to its admission cap; the rest was not sent]"

// toResult is r as the SDK's result: its content blocks decoded by the
// SDK (a result of plain text, image, audio, resource link and embedded
// resource blocks, _meta included, by plainResult, to the same value),
// its structured content (already checked against the tool's output
// schema by the catalog) passed on. A result the SDK cannot decode (a block of a type it does not
// know) is an error result that says so. A result the Backend cut
// (r.Truncated) ends in a TruncatedNotice block, and its _meta holds
// TruncatedMeta: true.
func toResult(r ports.ToolResult) *mcp.CallToolResult {
	out := decodeResult(r)
	if r.Truncated {
		out.Content = append(out.Content, &mcp.TextContent{Text: TruncatedNotice})
		if out.Meta == nil {
			out.Meta = mcp.Meta{}
		}
		out.Meta[TruncatedMeta] = true
	}
	return out
}

// decodeResult is r as the SDK's result, before toResult's notice.
func decodeResult(r ports.ToolResult) *mcp.CallToolResult {
	content := r.Content
	if len(content) == 0 || string(content) == "null" {
		content = json.RawMessage("[]")
	}
	raw, err := wireJSON(content, r.StructuredContent, r.IsError)
	if err == nil {
		if out, ok := plainResult(content, r.StructuredContent, r.IsError, raw); ok {
			return out
		}
	}
	var out mcp.CallToolResult
	if err == nil {
		err = json.Unmarshal(raw, &out)
	}
	if err != nil {
		return errorResult("mcpward: the server's result could not be forwarded (malformed_result)")
	}
	if out.Content == nil {
		out.Content = []mcp.Content{}
	}
	return &out
}

// promptHandler forwards a prompts/get of the prompt the Backend calls
// name; args maps each argument name offered to the server's own (the
// client's names are translated back). A result the Backend cut has
// TruncatedMeta in its _meta.
func (s *Server) promptHandler(name string, args map[string]string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		var in map[string]string
		if req.Params != nil && req.Params.Arguments != nil {
			in = make(map[string]string, len(req.Params.Arguments))
			for k, v := range req.Params.Arguments {
				if orig, ok := args[k]; ok {
					k = orig
				}
				in[k] = v
			}
		}
		ctx, round, server, err := s.promptRound(ctx, name, req)
		if err != nil {
			return nil, err
		}
		var r ports.PromptResult
		if round == nil {
			// A client before 2026-07-28: an upstream's rounds are put
			// to it on this session (handon.go).
			refused, err := s.legacyRounds(ctx, req.Session, func(ctx context.Context, _ *ports.InputRound) (err error) {
				r, err = s.b.GetPrompt(ctx, name, in)
				return err
			})
			if err != nil {
				return nil, err
			}
			if refused != "" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: refused}
			}
		} else {
			if r, err = s.b.GetPrompt(ctx, name, in); err != nil {
				return nil, err
			}
			if round.Requests != nil {
				return s.handedPrompt(req.Session, round, server, name)
			}
		}
		raw, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		var out mcp.GetPromptResult
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, fmt.Errorf("mcpward: the server's prompt could not be forwarded (malformed_reply)")
		}
		if r.Truncated {
			out.Meta = mcp.Meta{TruncatedMeta: true}
		}
		return &out, nil
	}
}

func (s *Server) resourceHandler(uri string) mcp.ResourceHandler {
	return func(ctx context.Context, _ *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		r, err := s.b.ReadResource(ctx, uri)
		if err != nil {
			return nil, err
		}
		return readResult(r), nil
	}
}

// readResult is r as the SDK's result; one the Backend cut has
// TruncatedMeta in its _meta.
func readResult(r ports.ReadResult) *mcp.ReadResourceResult {
	out := &mcp.ReadResourceResult{Contents: make([]*mcp.ResourceContents, 0, len(r.Contents))}
	if r.Truncated {
		out.Meta = mcp.Meta{TruncatedMeta: true}
	}
	for _, c := range r.Contents {
		rc := &mcp.ResourceContents{URI: c.URI, MIMEType: c.MIMEType}
		if c.IsBlob {
			rc.Blob = c.Blob
			if rc.Blob == nil {
				rc.Blob = []byte{}
			}
		} else {
			rc.Text = c.Text
		}
		out.Contents = append(out.Contents, rc)
	}
	return out
}

// ServeStdio serves one client over in and out (newline-delimited
// JSON-RPC) until the client closes in, or ctx ends. A client's cancel of
// a call ends the call's ctx: the Backend ends the upstream call. A
// tools/call the go-sdk server would handle exactly as the Server does
// itself is answered without the SDK's decoding and dispatch (fastcall.go:
// the same handler, middleware, rules and answer bytes); every other
// message goes to the SDK.
func (s *Server) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	var t mcp.Transport = &mcp.IOTransport{Reader: in, Writer: out}
	if s.stdio != nil {
		t = s.stdio(in, out)
	}
	var err error
	if s.noFast {
		err = s.srv.Run(ctx, t)
	} else {
		err = s.serveStdio(ctx, t)
	}
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// Sessions returns the number of connected client sessions.
func (s *Server) Sessions() int {
	n := 0
	for range s.srv.Sessions() {
		n++
	}
	return n
}
