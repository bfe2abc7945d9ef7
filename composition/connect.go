package composition

import (
	"context"
	"slices"
	"time"

	"github.com/mcpward/mcpward/adapters/mcpsession"
	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/supervisor"
	"github.com/mcpward/mcpward/ports"
)

// The states a ServerStatus adds to those of Evaluate.
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
	// StateConnecting: the server is usable and not Ready yet, or no longer:
	// waiting for its turn, connecting, in a backoff sleep between
	// attempts, or reconnecting after its session ended (its retained
	// catalog, if any, stays in the Set marked stale). Class and Reason
	// are the failure being retried, if any.
	StateConnecting State = "connecting"
	// StateClosed: Fleet.Close closed the server's supervisor.
	StateClosed State = "closed"
)

// Reasons of the refusals of Fleet.
const (
	// ReasonUnknownTool (catalog.ReasonUnknownTool): a tool call named a
	// tool no catalog holds: Fleet.CallServerTool a tool the server's
	// catalog lacks, Fleet.CallHostTool a host-facing name the current Set
	// lacks (the server named when the name is one of a connected
	// server's). Class Config.
	ReasonUnknownTool = catalog.ReasonUnknownTool
	// ReasonServerUnavailable (supervisor.ReasonServerUnavailable): the
	// server of a call is not connected now (failed, connecting, not
	// usable); nothing was sent. The refusal names the server, and its
	// Detail says the server's state and reason word. Class Transient
	// while it connects, the failure's class once it failed (Refused for
	// a server denied or refused, Config for one that did not resolve).
	ReasonServerUnavailable = supervisor.ReasonServerUnavailable
	// ReasonFleetClosed: the Fleet was closed (Fleet.Close): every tool,
	// prompt and resource of it, and Add, Remove and Reconnect, refuse.
	// Class Config: the host used what it closed; nothing to retry.
	ReasonFleetClosed = "fleet_closed"
	// ReasonServerRemoved: the server was removed from the Fleet
	// (Fleet.Remove): the tools of its catalogs refuse, even when a
	// server of that name is added again (read the current Set). Class
	// Config.
	ReasonServerRemoved = "server_removed"
	// ReasonNotConnectable: a usable server whose target could not be
	// built again (its sources changed meanwhile); also Fleet.Reconnect of
	// a server the Fleet has no supervisor for (not usable, unknown, or
	// not connectable). Class Config.
	ReasonNotConnectable = "not_connectable"
	// ReasonServerExists: Fleet.Add named a server the Fleet already has
	// (Remove it first). Class Config.
	ReasonServerExists = "server_exists"
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
	// MaxBinaryBytes bounds each image, audio or embedded blob block of a
	// tool result or prompt, in decoded bytes, apart from ResultCap: a
	// larger block refuses the result (Class Protocol, Reason
	// "binary_content_too_large"); 0 means catalog.DefaultMaxBinaryBytes
	// (5 MiB).
	MaxBinaryBytes int
	// ReadCap bounds what a resource read hands over, in bytes (a longer
	// read is cut and marked Truncated); 0 means catalog.DefaultReadCap
	// (1 MiB).
	ReadCap int
	// ConnectTimeout bounds one connect attempt (connect and first
	// discovery); 0 means supervisor.DefaultConnectTimeout (30 s),
	// supervisor.NoTimeout none.
	ConnectTimeout time.Duration
	// CallTimeout is how long a tool call may go without a progress
	// notification; 0 means supervisor.DefaultCallTimeout (10 min),
	// supervisor.NoTimeout none. A definition's "timeout" may only
	// shorten it. Progress restarts it only for a call that asked for
	// progress (its ctx from ports.WithProgress: then, and only then, the
	// server gets a progress token); any other call it bounds in all.
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
	// must not block and must not call Fleet.Close or Fleet.Remove (they
	// wait for it); the Fleet's reads (Current, Set, Servers) are fine.
	OnStatus func(name string, st supervisor.Status)
	// Supervisor configures every supervisor beyond the knobs above (which
	// win over its fields when set); nil means the supervisor's defaults.
	// Its OnChange is replaced by one calling OnStatus, and a nil
	// Logger by Config.Logger. The defaults bound every connect attempt
	// (ConnectTimeout: supervisor.DefaultConnectTimeout, 30 s) and every
	// tool call, whether made with Fleet.CallServerTool,
	// Fleet.CallHostTool or through a tool of Set() (CallTimeout:
	// supervisor.DefaultCallTimeout, 10 min
	// without a progress notification of the call; CallTimeoutMax:
	// supervisor.DefaultCallTimeoutMax, 1 h in all); supervisor.NoTimeout
	// turns one off. A call that times out fails with Class Transient,
	// Reason supervisor.ReasonCallTimeout, a connect attempt with
	// supervisor.ReasonConnectTimeout. A server whose definition sets
	// "timeout" gets that as its CallTimeout when it is shorter than this
	// one (a definition never lengthens the host's bound; progress
	// notifications restart it the same way, for a call whose ctx came
	// from ports.WithProgress).
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
	// OnResourceUpdated, when non-nil, is told of every update of a
	// resource the host subscribed to (Fleet.Subscribe), with the server's
	// name: coalesced per URI, at most one batch per server and
	// supervisor.DefaultUpdateInterval, never concurrently for one server.
	// It is a signal for the host, never a turn of the model; it must not
	// block for long. When set it wins over Supervisor.OnResourceUpdated.
	OnResourceUpdated func(ports.ResourceUpdate)
	// Background makes Connect (and Fleet.Add) return without waiting for
	// the connects: see Connect.
	Background bool
	// OnServerLog, when non-nil, gets every server log message that
	// passes the per-server rate limit (ServerLogBurst, ServerLogRate),
	// masked and sanitized as for Config.Logger: the servers declaring
	// logging are then asked for every level (debug and above), whatever
	// Config.Logger and Config.ServerLogLevel (the logger still gets only
	// its levels). Called from the server's session, possibly
	// concurrently for different servers: it must not block.
	OnServerLog func(ServerLog)

	// connector replaces the mcpsession Connector (tests only).
	connector ports.Connector
}

// ToolSummary describes one admitted tool of a connected server, in its
// ServerStatus: what the model sees of it and its name on the server. It
// is a description, not the tool: calls go through the Set's tools
// (Generation.Set.ModelTools, a ports.Tool each) or Fleet.CallHostTool.
type ToolSummary struct {
	// ToolSpec is what the host's model sees (host-facing name,
	// description, narrowed input schema).
	ports.ToolSpec
	// NameOnServer is the tool's own name on the server.
	NameOnServer string
	// ServerTool is NameOnServer.
	//
	// Deprecated: use NameOnServer.
	ServerTool string
}

// ToolInfo is the former name of ToolSummary.
//
// Deprecated: use ToolSummary, which says it describes a tool (ports.Tool
// and catalog.Tool are the tools).
type ToolInfo = ToolSummary

// ServerStatus is what a Fleet shows of one server name now (Connect,
// Add, Servers): its state, the failure it is in, its catalog's tools.
// Like ServerEvaluation (what Evaluate decided, in Evaluation) it holds
// nothing secret: names, reason words, and what the server itself
// declared about its tools.
type ServerStatus struct {
	// Name is the server id.
	Name string
	// State is the evaluation state of a server that was not usable, or
	// StateConnecting, StateConnected, StateFailed or StateClosed for a
	// usable one, or StateUnknown.
	State State
	// Class and Reason are the failure of a StateFailed server, the
	// discovery failure of a connected one whose catalog is partial or
	// stale, or the failure a StateConnecting server is retrying; for a
	// server that was not usable Reason is the evaluation reason. Class is
	// refusal.None whenever there is no failure class: a connected server
	// without a discovery failure, a connecting one without a failure yet,
	// and a server that was not usable (see Evaluation).
	Class  refusal.Class
	Reason string
	// Evaluation is what Evaluate decided about the server (zero for
	// StateUnknown): Evaluation.NeedsApproval and its friends say what the
	// host may ask the user.
	Evaluation ServerEvaluation
	// Partial maps each list whose discovery stopped early to its reason.
	Partial map[ports.ListKind]string
	// Stale reports a catalog kept after a failed refresh.
	Stale bool
	// Tools are the admitted tools, sorted by host-facing name.
	Tools []ToolSummary
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
	// ProtocolVersion is the MCP protocol version negotiated with the
	// server ("2026-07-28" for the modern era, "2025-11-25" and older for
	// the legacy one; ProtocolEra names it), that of the session its
	// catalog came from; "" when it has none.
	ProtocolVersion string
}

// ProtocolEra names the era of a protocol version: "modern" (2026-07-28
// and later: server/discover, no protocol session), "legacy" (initialize),
// or "" for anything that is not a protocol version.
func ProtocolEra(version string) string { return mcpsession.Era(version) }

// ServerResult is the former name of ServerStatus.
//
// Deprecated: use ServerStatus, whose name says it is a server's state in
// the Fleet (ServerEvaluation is what Evaluate decided).
type ServerResult = ServerStatus

// NeedsSignIn reports whether the server failed for want of a sign-in
// (Class AuthRequired: ReasonSignInRequired, ReasonStepUpRequired, or an
// Authenticator's own word): a host signs the user in (Host.SignIn) and
// calls Fleet.Reconnect.
func (s ServerStatus) NeedsSignIn() bool {
	return s.State == StateFailed && s.Class == refusal.AuthRequired
}

// Connect evaluates srcs (see Evaluate) and connects every usable server
// (StateAllowed), limited to opts.Names when given, each under its own
// supervisor over an mcpsession Connector built on h.Dialer(). At most
// opts.Parallel servers connect at once. Servers that are not usable are
// never dialled and appear with their evaluation state and reason, a
// refused one also as a catalog.KindServer entry of the Set's rejected
// bucket. The Fleet's supervisors keep running (reconnecting, refreshing
// on list_changed) until Fleet.Close, and the Fleet's Set and Servers
// follow them (see Fleet).
//
// By default Connect blocks until every connect has ended (Ready or
// Failed, or ctx ended: a server whose connect ctx ended is StateFailed,
// Class Transient, Reason "cancelled" or "timeout"). With
// opts.Background it returns as soon as the servers are evaluated: each
// usable server is StateConnecting and connects in the background, under
// the Fleet's lifetime rather than ctx (ctx then bounds only the
// evaluation); watch them with Fleet.Current, Fleet.Servers or
// opts.OnStatus, or wait for them with Fleet.Wait.
func (h *Host) Connect(ctx context.Context, srcs []definition.Source, opts *ConnectOptions) *Fleet {
	if opts == nil {
		opts = &ConnectOptions{}
	}
	f := newFleet(h, opts)
	f.add(ctx, srcs, opts.Names, opts.Background)
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
	if sopts.Step == nil {
		sopts.Step = h.tel.step()
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
func fill(sr *ServerStatus, cat *catalog.Catalog) {
	if len(cat.Partial) > 0 {
		sr.Partial = make(map[ports.ListKind]string, len(cat.Partial))
		for k, v := range cat.Partial {
			sr.Partial[k] = v
		}
	}
	sr.Stale = cat.Stale
	sr.ProtocolVersion = cat.Identity.ProtocolVersion
	if len(cat.Tools) > 0 {
		sr.Tools = slices.Grow(sr.Tools, len(cat.Tools)) // one allocation, not append's ~5× over 10,000 tools
	}
	for _, t := range cat.Tools {
		n := t.NameOnServer()
		sr.Tools = append(sr.Tools, ToolSummary{ToolSpec: t.Spec(), NameOnServer: n, ServerTool: n})
	}
	sr.Rejected = slices.Clone(cat.Rejected)
	sr.Diagnostics = slices.Clone(cat.Diagnostics)
}
