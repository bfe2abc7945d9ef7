package composition

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/mcpward/mcpward/adapters/mcpsession"
	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/supervisor"
	"github.com/mcpward/mcpward/ports"
)

// The states a ServerResult adds to those of Evaluate.
const (
	// StateConnected: the server was usable and its supervisor is Ready;
	// its catalog is in the Fleet (possibly partial: see Partial, Class
	// and Reason).
	StateConnected State = "connected"
	// StateFailed: the server was usable but connecting failed; Class and
	// Reason say why.
	StateFailed State = "failed"
	// StateUnknown: ConnectOptions.Names named a server no source defines
	// (Reason ReasonUnknownServer).
	StateUnknown State = "unknown"
)

// Reasons of the refusals of Fleet.
const (
	// ReasonUnknownTool: Fleet.Call named a tool the server's catalog does
	// not hold. Class Config.
	ReasonUnknownTool = "unknown_tool"
	// ReasonNotConnectable: a usable server whose target could not be
	// built again (its sources changed meanwhile). Class Config.
	ReasonNotConnectable = "not_connectable"
)

// DefaultConnectParallel is how many servers Connect connects at once
// when ConnectOptions.Parallel is 0.
const DefaultConnectParallel = 4

// ConnectOptions configure Connect. A nil *ConnectOptions means every
// default.
//
// The knobs a host tunes come first; each is zero for its default, and
// when set wins over the field it stands for in Supervisor. Everything
// else (backoff, page bounds, the client identity) is in Supervisor and
// Session.
type ConnectOptions struct {
	// ResultCap is the admission cap, in characters, of every tool result
	// (what a call returns is cut to it and marked Truncated), unless the
	// tool's own result-size metadata sets one; 0 means
	// catalog.DefaultAdmissionCap (100,000).
	ResultCap int
	// ConnectTimeout bounds one connect attempt (connect and first
	// discovery); 0 means supervisor.DefaultConnectTimeout (30 s),
	// supervisor.NoTimeout none.
	ConnectTimeout time.Duration
	// CallTimeout is how long a tool call may go without a progress
	// notification; 0 means supervisor.DefaultCallTimeout (10 min),
	// supervisor.NoTimeout none. A definition's "timeout" may only
	// shorten it.
	CallTimeout time.Duration
	// CallTimeoutMax is how long a tool call may last in all; 0 means
	// supervisor.DefaultCallTimeoutMax (1 h), supervisor.NoTimeout none.
	CallTimeoutMax time.Duration
	// MaxItems and MaxBytes bound the discovery of each list kind of one
	// server (items kept, bytes kept); 0 means catalog.DefaultMaxItems
	// (50,000) and catalog.DefaultMaxBytes (32 MiB). A list cut short is
	// marked Partial.
	MaxItems int
	MaxBytes int64
	// Parallel bounds how many servers connect at once; 0 (or less) means
	// DefaultConnectParallel (4).
	Parallel int

	// Names, when non-empty, limits Connect to these server names (a name
	// no source defines gets a StateUnknown result). Empty means every
	// defined name.
	Names []string
	// OnStatus, when non-nil, is called with every status change of every
	// connecting server (see supervisor.Options.OnChange): possibly
	// concurrently for different servers, never concurrently for one. It
	// must not block and must not call Fleet.Close.
	OnStatus func(name string, st supervisor.Status)
	// Supervisor configures every supervisor beyond the knobs above (which
	// win over its fields when set); nil means the supervisor's defaults.
	// Its OnChange is replaced by one calling OnStatus, and a nil
	// Logger by Config.Logger. The defaults bound every connect attempt
	// (ConnectTimeout: supervisor.DefaultConnectTimeout, 30 s) and every
	// tool call, whether made with Fleet.Call or through a ports.Tool of
	// Set().Tools() (CallTimeout: supervisor.DefaultCallTimeout, 10 min
	// without a progress notification of the call; CallTimeoutMax:
	// supervisor.DefaultCallTimeoutMax, 1 h in all); supervisor.NoTimeout
	// turns one off. A call that times out fails with Class Transient,
	// Reason supervisor.ReasonCallTimeout, a connect attempt with
	// supervisor.ReasonConnectTimeout. A server whose definition sets
	// "timeout" gets that as its CallTimeout when it is shorter than this
	// one (a definition never lengthens the host's bound; progress
	// notifications restart it the same way).
	Supervisor *supervisor.Options
	// Session configures the mcpsession Connector; nil means its defaults.
	Session *mcpsession.Options
	// Elicitation, when non-nil with an Elicitor, lets the servers it
	// enables ask the user questions mid-call (see ElicitationOptions);
	// nil declares no elicitation to any server.
	Elicitation *ElicitationOptions
	// Roots, when non-nil with a Roots, offers the host's roots to the
	// servers it enables (see RootsOptions); nil declares no roots.
	Roots *RootsOptions
}

// ToolInfo is one admitted tool of a connected server.
type ToolInfo struct {
	// ToolSpec is what the host's model sees (host-facing name,
	// description, narrowed input schema).
	ports.ToolSpec
	// ServerTool is the tool's own name on the server.
	ServerTool string
}

// ServerResult is what Connect made of one server name. Like Result it
// holds nothing secret: names, reason words, and what the server itself
// declared about its tools.
type ServerResult struct {
	// Name is the server id.
	Name string
	// State is the evaluation state of a server that was not usable, or
	// StateConnected / StateFailed for a usable one, or StateUnknown.
	State State
	// Class and Reason are the failure of a StateFailed server, or the
	// discovery failure of a connected one whose catalog is partial; for a
	// server that was not usable Reason is the evaluation reason. Class is
	// meaningful only with StateFailed, or StateConnected with a Reason
	// (its zero value is refusal.Internal).
	Class  refusal.Class
	Reason string
	// Evaluation is the server's Result of Evaluate (zero for
	// StateUnknown).
	Evaluation Result
	// Partial maps each list whose discovery stopped early to its reason.
	Partial map[ports.ListKind]string
	// Stale reports a catalog kept after a failed refresh.
	Stale bool
	// Tools are the admitted tools, sorted by host-facing name.
	Tools []ToolInfo
	// Rejected are the entries of the server's catalog that did not make
	// it, and the server itself (Kind catalog.KindServer) when it was
	// refused or failed.
	Rejected []catalog.Rejected
	// Diagnostics are the catalog's findings about admitted tools.
	Diagnostics []catalog.Diagnostic
	// Detail says more about the failure of a StateFailed server (its
	// exit status, program, endpoint, network cause: see FailureDetail);
	// zero otherwise. Like Class and Reason it holds no secret; what the
	// server printed is only ever available from Fleet.ServerStderr.
	Detail FailureDetail
}

// Fleet is the set of servers one Connect started. It is safe for
// concurrent use. Close must be called to stop every supervisor.
type Fleet struct {
	results []ServerResult
	set     *catalog.Set
	sups    map[string]*supervisor.Server
	diag    *diagnostics
	logs    *serverLogs // nil when the Host forwards no server log messages

	closeOnce sync.Once
	closeErr  error
}

// Connect evaluates srcs (see Evaluate) and connects every usable server
// (StateAllowed), limited to opts.Names when given, each under its own
// supervisor over an mcpsession Connector built on h.Dialer(). At most
// opts.Parallel servers connect at once. It returns when every connect has
// ended (Ready or Failed, or ctx ended); servers that are not usable are
// never dialled and appear with their evaluation state and reason, a
// refused one also as a catalog.KindServer entry of the Set's rejected
// bucket. The Fleet's supervisors keep running (reconnecting, refreshing)
// until Fleet.Close.
func (h *Host) Connect(ctx context.Context, srcs []definition.Source, opts *ConnectOptions) *Fleet {
	if opts == nil {
		opts = &ConnectOptions{}
	}
	ev := h.Evaluate(ctx, srcs)
	res := h.resolve(srcs)
	names := opts.Names
	if len(names) == 0 {
		for _, r := range ev.Servers {
			names = append(names, r.Name)
		}
	} else {
		names = slices.Clone(names)
		slices.Sort(names)
		names = slices.Compact(names)
	}
	f := &Fleet{results: make([]ServerResult, len(names)), sups: map[string]*supervisor.Server{}, diag: newDiagnostics(), logs: h.fleetLogs()}
	var conn *mcpsession.Connector
	if h.dialer != nil {
		conn = mcpsession.New(h.dialer.recording(f.diag), f.logs.sessionOptions(opts.sessionOptions()))
	}
	parallel := opts.Parallel
	if parallel <= 0 {
		parallel = DefaultConnectParallel
	}
	sem := make(chan struct{}, parallel)
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		r, ok := ev.Server(name)
		f.results[i] = ServerResult{Name: name, State: r.State, Reason: r.Reason, Evaluation: r}
		switch {
		case !ok:
			f.results[i].State, f.results[i].Reason = StateUnknown, ReasonUnknownServer
			continue
		case !r.Usable():
			continue
		}
		t, m, tr, ok := h.materialTarget(ctx, srcs, name)
		if !ok || conn == nil {
			f.results[i].State, f.results[i].Class, f.results[i].Reason = StateFailed, refusal.Config, ReasonNotConnectable
			continue
		}
		f.diag.add(name, m, tr.Projection)
		var def *definition.Definition
		if s, found := res.Server(name); found {
			def = s.Def
		}
		sv := supervisor.New(f.logs.wrap(conn, name, m), t, h.supervisorOptions(opts, name, def, res.DeniedTools))
		f.sups[name] = sv
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs[i] = sv.Connect(ctx) // returns the ctx refusal at once
				return
			}
			defer func() { <-sem }()
			errs[i] = sv.Connect(ctx)
		}()
	}
	wg.Wait()

	var cats []*catalog.Catalog
	var rejected []catalog.Rejected
	for i := range f.results {
		sr := &f.results[i]
		sv := f.sups[sr.Name]
		if sv != nil {
			if err := errs[i]; err != nil {
				sr.State, sr.Class, sr.Reason = StateFailed, refusal.ClassOf(err), refusal.ReasonOf(err)
				sr.Detail = f.diag.detail(sr.Name)
			} else {
				sr.State, sr.Reason = StateConnected, ""
				if st := sv.Status(); st.Err != nil {
					sr.Class, sr.Reason = st.Err.Class, st.Err.Reason
				}
			}
			if cat := sv.Catalog(); cat != nil {
				cats = append(cats, cat)
				fill(sr, cat)
			}
		}
		if sr.State == StateRefused || sr.State == StateFailed {
			rej := catalog.Rejected{Server: sr.Name, Kind: catalog.KindServer, Name: sr.Name, Reason: sr.Reason}
			sr.Rejected = append([]catalog.Rejected{rej}, sr.Rejected...)
			rejected = append(rejected, rej)
		}
	}
	f.set = catalog.NewSet(cats, rejected)
	return f
}

// supervisorOptions returns the options of the supervisor of server name:
// opts.Supervisor with OnChange calling opts.OnStatus, the Host's logger
// when it sets none, and catalog options (a copy of opts.Supervisor's)
// carrying def's tool filters (includeTools, excludeTools) and the managed
// policy's denied tool patterns, so filtered and denied tools never reach
// the Fleet's tool set (they are in the catalog's rejected bucket as
// catalog.ReasonToolFiltered and catalog.ReasonPolicyDenied). A
// definition's "timeout" (def.Timeout) may only shorten the call timeout:
// CallTimeout becomes the smaller of the host's (0 read as
// supervisor.DefaultCallTimeout; with supervisor.NoTimeout the
// definition's applies) and def.Timeout, never a longer one.
func (h *Host) supervisorOptions(opts *ConnectOptions, name string, def *definition.Definition, deniedTools []string) *supervisor.Options {
	var sopts supervisor.Options
	if opts.Supervisor != nil {
		sopts = *opts.Supervisor
	}
	opts.applyKnobs(&sopts)
	var copts catalog.Options
	if sopts.Catalog != nil {
		copts = *sopts.Catalog
	}
	if def != nil {
		copts.IncludeTools = slices.Clone(def.IncludeTools)
		copts.ExcludeTools = slices.Clone(def.ExcludeTools)
	}
	copts.DeniedTools = slices.Clone(deniedTools)
	if def != nil {
		sopts.CallTimeout = shorterCallTimeout(sopts.CallTimeout, def.Timeout)
	}
	sopts.Catalog = &copts
	sopts.OnChange = nil
	if on := opts.OnStatus; on != nil {
		sopts.OnChange = func(st supervisor.Status) { on(name, st) }
	}
	if sopts.Logger == nil {
		sopts.Logger = h.logger
	}
	return &sopts
}

// shorterCallTimeout returns the call timeout of a server whose
// definition's "timeout" is def (0: absent) under the host's call timeout
// host (supervisor.Options.CallTimeout: 0 the default, negative none): def
// when it is shorter than the host's limit, else host unchanged. A
// definition can shorten a call's bound, never lengthen it.
func shorterCallTimeout(host, def time.Duration) time.Duration {
	if def <= 0 {
		return host
	}
	limit := host
	if limit == 0 {
		limit = supervisor.DefaultCallTimeout
	}
	if limit < 0 || def < limit {
		return def
	}
	return host
}

// fill copies what sr shows of cat.
func fill(sr *ServerResult, cat *catalog.Catalog) {
	if len(cat.Partial) > 0 {
		sr.Partial = make(map[ports.ListKind]string, len(cat.Partial))
		for k, v := range cat.Partial {
			sr.Partial[k] = v
		}
	}
	sr.Stale = cat.Stale
	for _, t := range cat.Tools {
		sr.Tools = append(sr.Tools, ToolInfo{ToolSpec: t.Spec(), ServerTool: t.ServerName()})
	}
	sr.Rejected = slices.Clone(cat.Rejected)
	sr.Diagnostics = slices.Clone(cat.Diagnostics)
}

// Servers returns one ServerResult per name Connect considered, sorted by
// name, in a new slice (the results are a snapshot taken when Connect
// returned).
func (f *Fleet) Servers() []ServerResult { return slices.Clone(f.results) }

// Set returns the catalog Set of the connected servers as Connect left
// them, with the refused and failed servers in its rejected bucket.
func (f *Fleet) Set() *catalog.Set { return f.set }

// Call calls the tool named tool (its name on the server, not the
// host-facing name) of the server named server, through the server's
// current catalog: the arguments are validated against the narrowed
// schema before anything is sent (an *catalog.ArgumentError, Class Config,
// Reason "invalid_arguments"). It refuses with a *refusal.Error: a server
// Connect did not start (Class Config, ReasonUnknownServer), a server
// without a catalog (the supervisor's last failure, or Class Transient
// supervisor.ReasonNotConnected), and a tool the catalog does not hold
// (Class Config, ReasonUnknownTool). Other errors are those of
// catalog.Tool.Call, which calls through the server's supervisor: the
// call is bounded by its CallTimeout and CallTimeoutMax (see
// ConnectOptions.Supervisor) and fails with Class Transient,
// supervisor.ReasonCallTimeout when it outlives them. A host that wants
// the call's progress passes a ctx from ports.WithProgress.
func (f *Fleet) Call(ctx context.Context, server, tool string, args json.RawMessage) (ports.ToolResult, error) {
	sv := f.sups[server]
	if sv == nil {
		return ports.ToolResult{}, refusal.New(refusal.Config, ReasonUnknownServer, server)
	}
	cat := sv.Catalog()
	if cat == nil {
		if st := sv.Status(); st.Err != nil {
			return ports.ToolResult{}, st.Err
		}
		return ports.ToolResult{}, refusal.New(refusal.Transient, supervisor.ReasonNotConnected, server)
	}
	// Host-facing names are a pure function of (server, tool): one map
	// lookup, however large the catalog.
	if t, ok := cat.Tool(catalog.ToolName(cat.Server, tool)); ok && t.ServerName() == tool {
		return t.Call(ctx, args)
	}
	return ports.ToolResult{}, &refusal.Error{Class: refusal.Config, Reason: ReasonUnknownTool, Server: server,
		Detail: "the server's catalog has no tool of that name"}
}

// Close closes every supervisor, waiting until each has stopped (no
// session, child process or goroutine is left), logs the count of server
// log messages dropped since the last one logged (MsgServerLogDropped),
// and returns the first close failure. It is idempotent.
func (f *Fleet) Close() error {
	f.closeOnce.Do(func() {
		var wg sync.WaitGroup
		errs := make([]error, 0, len(f.sups))
		var mu sync.Mutex
		for _, sv := range f.sups {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := sv.Close(); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		f.logs.close()
		if len(errs) > 0 {
			f.closeErr = errs[0]
		}
	})
	return f.closeErr
}
