// Package composition is the package a host program embedding mcpward
// drives: the Host (evaluate, approve, sign in, connect), its Config, and
// the Fleet of connected servers whose tools go into the host's own tool
// slot.
//
// A Host is built by one deployment profile, each a package of its own so
// a program links only the stores it uses (desktop and shared are modules
// of their own too, so a host using another profile never resolves the
// keychain or PostgreSQL modules):
//
//	composition/memory    no files: approvals, audit and locks in memory (no OAuth)
//	composition/headless  everything on files under a state directory
//	composition/desktop   tokens in the OS keychain, the rest on files
//	composition/shared    everything in one PostgreSQL database many machines share
//	composition.New       the host's own ports (Ports)
//
// Every profile has one shape, Open(ctx, Config) (*composition.Host,
// func(), error), its Config embedding this package's Config. Each is a
// Wire injector (wire.go in its package; make wire regenerates them).
//
// A host imports this package and one profile, and little else: names.go
// gives it, under this package, the names it needs from the packages that
// define them (Source and the tiers, Tool and its results, ToolName,
// Progress and WithProgress, the elicitation types, Error, the classes,
// ClassOf and ReasonOf, and the reasons a host branches on). GitWorkspace
// and StaticTrust are the workspace trusts a profile's Trust takes, so a
// project server can be approved. A ServerEvaluation says when to ask
// the user (NeedsApproval, ApprovalChanged, NeedsTrustedWorkspace,
// NeedsVariables), a ServerStatus when to sign in (NeedsSignIn).
//
// OAuth sign-in is reached through the OAuthClient interface: package
// composition/signin builds it on adapters/oauth and holds the sign-in
// functions that take that package's types; the profiles that can sign
// in (headless, desktop, shared) wire it in, and a program on the memory
// profile links no OAuth code.
//
// A Host runs the definitions and activation flow of mcpward in one
// straight line: tier sources (bytes the host read, tagged with tier and
// origin) → definition.Decode → definition.Resolve → definition.Materialize
// (with the host's variable Lookup) → definition.Fingerprint and
// definition.Endpoint → activation.Decide. Every server ends in a ServerEvaluation
// whose State the caller can branch on; nothing is an opaque error and
// nothing is dropped.
//
// Authentication is decided during Evaluate, so list and show see it: an
// HTTP definition asking for oauth with no Authenticator registered for it,
// or for a header helper the host does not allow, stays listed with
// StateRefused and a reason word (see Authentication), and is never
// connected with its static headers alone.
//
// The Dialer (dialer.go) admits and constructs the transport of one target
// for adapters/mcpsession: Streamable HTTP behind the egress policy with the
// server's Authenticator, or a stdio child under the host's
// ProcessAuthority (authority.go). Host.Connect (connect.go) connects the
// usable servers, each under a core/supervisor Server over an
// adapters/mcpsession Connector built on that Dialer, and returns a Fleet:
// one ServerStatus per server and the catalog.Set of their tools.
package composition

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sort"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/adapters/stdiotransport"
	"github.com/mcpward/mcpward/core/activation"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// State is where one server name ended up after the whole flow.
type State string

// The states of a ServerEvaluation. Only StateAllowed may be used.
const (
	// StateAllowed: resolved, materialized and allowed by activation
	// (Reason activation.ReasonHostTrustedTier or activation.ReasonApproved).
	StateAllowed State = "allowed"
	// StateDenied: resolved and materialized, but activation denied it;
	// Reason is the activation reason and, for
	// activation.ReasonIdentityChanged, Mismatch names the changed fields.
	StateDenied State = "denied"
	// StateUnresolved: the winning entry is malformed or ambiguous (Reason
	// is the definition problem word), or its templates could not be
	// expanded (Reason definition.ReasonUnsetVariable with Missing listing
	// the variables, or definition.ReasonInvalidTemplate).
	StateUnresolved State = "unresolved"
	// StateBlocked: a managed source is unusable, so a lower-tier name is
	// blocked (Reason definition.ReasonManagedUnreadable).
	StateBlocked State = "blocked"
	// StateDisabled: a permitted disable overlay names it (DisabledBy).
	StateDisabled State = "disabled"
	// StateRefused: the definition is refused by name. Reason is the
	// definition's refusal word (for example
	// definition.RefusalTransportSSE), or an authentication refusal of an
	// HTTP definition that otherwise resolved and materialized:
	// ReasonOAuthSignInUnavailable (oauth and no Authenticator registered
	// for the server), ReasonHeaderHelperNotAllowed (a headersHelper not in
	// Config.HelperAllowList) or httptransport.ReasonHelperArgvInvalid (a
	// headersHelper whose program is not an absolute path); or the managed
	// policy's verdict on what the definition runs, expanded
	// (definition.ReasonPolicyDenied, definition.ReasonPolicyNotAllowed;
	// see definition.Resolution.PolicyVerdict), or on a definition whose
	// expansion is unknown and which a deny entry could match; or
	// definition.RefusalSecretInURL for a secret value that, expanded,
	// would decide the URL's host. Such a ServerEvaluation keeps its Fingerprint and
	// Projection, reaches no activation decision (no audit record) and
	// cannot be approved.
	StateRefused State = "refused"
)

// Reasons of the refusals Host methods return (besides those of package
// activation, which Approve, Revoke and RevokeAll pass through).
const (
	// ReasonUnknownServer: no source defines the name. Class Config.
	ReasonUnknownServer = "unknown_server"
	// ReasonNotApprovable: the name does not resolve to a usable
	// definition (it is unresolved, blocked, disabled or refused), so there
	// is no identity to approve. Class Config; Detail names the state.
	ReasonNotApprovable = "not_approvable"
	// ReasonStoreUnavailable, ReasonStoreCorrupt and ReasonStoreFailed are
	// the reasons of a failed Check.
	ReasonStoreUnavailable = "store_unavailable"
	ReasonStoreCorrupt     = "store_corrupt"
	ReasonStoreFailed      = "store_failed"
	// ReasonStoreReplayed is the reason of a failed Check whose store
	// reported ports.ErrReplayed without a reason word of its own: a
	// record it held once was put back, or its state rolled back, by
	// someone without its key. A store's own word (pgstore's
	// "approval_replayed", "store_rolled_back") is kept when it gave one.
	ReasonStoreReplayed = "store_replayed"
	// ReasonReplayedRemoved is the audit reason of the record RevokeAll
	// appends when it removed approvals the store refused as replayed.
	ReasonReplayedRemoved = "replayed_approval_removed"
)

// ServerEvaluation is what Evaluate decided about one server name (what a
// Fleet shows of a connected server is its ServerStatus). Every field is
// safe to print: it holds no configuration value, only the masked
// projection, reason words, field and variable names. Its methods answer
// a host's usual questions (Usable, NeedsApproval, ApprovalChanged,
// NeedsTrustedWorkspace, NeedsVariables) without comparing reason words.
type ServerEvaluation struct {
	// Name is the server id.
	Name string
	// State is what the caller branches on.
	State State
	// Reason is a stable word: the activation reason for StateAllowed and
	// StateDenied, the definition's reason otherwise.
	Reason string
	// Tier and Origin are the provenance of the winning entry (for an
	// ambiguous name only the tier; see Contenders).
	Tier   ports.Tier
	Origin string
	// Transport is the declared transport, "" when the winning entry is
	// malformed.
	Transport definition.Kind
	// Fingerprint is the definition fingerprint, "" when the definition
	// could not be materialized.
	Fingerprint string
	// Projection is the redacted projection: of the materialized
	// definition when it could be materialized, of the definition as
	// written otherwise; nil when there is no definition.
	Projection *definition.Projection
	// Missing lists the unset variables the definition needs.
	Missing []string
	// Field names the offending field of a malformed entry.
	Field string
	// Detail is a fixed, secret-free phrase completing Reason (for
	// example the field holding an invalid template).
	Detail string
	// Mismatch names the identity fields (activation.Field* words) that
	// differ from the closest approval.
	Mismatch []string
	// Auth says how connections to the server authenticate (see
	// AuthKind); AuthNone for stdio and for a definition that did not
	// resolve and materialize, or was refused by its authentication.
	Auth AuthKind
	// Identity is the identity the activation decision is bound to; zero
	// unless the definition reached activation.
	Identity ports.Identity
	// Contenders, Shadowed and DisabledBy are as in definition.Server.
	Contenders []definition.Provenance
	Shadowed   []definition.Provenance
	DisabledBy *definition.Provenance
	// Err is non-nil when activation could not decide (a failing store or
	// workspace trust): a *refusal.Error; the State is then StateDenied.
	Err error
	// Launch is the reason word the stdio launch checks give a server that
	// resolved and materialized ("program_not_found" when its program is
	// not on the PATH the child would get, "cwd_not_found", the process
	// authority's refusal, ...), checked at evaluation without spawning
	// anything and only when the host gave a process authority; "" when
	// the launch would be admitted or was not checked. It does not change
	// State: a server can be approved before its program is installed, and
	// connecting it fails with this reason until then. LaunchDetail is the
	// check's fixed, secret-free phrase.
	Launch       string
	LaunchDetail string

	// subject is the activation subject, set when the definition was
	// materialized.
	subject *activation.Subject
	// decided is set when activation decided (and recorded) the server.
	decided bool
}

// unaudited makes r what a failed audit record makes a decision: denied,
// ReasonAuditUnavailable, err kept (activation.Decider.Decide's rule:
// nothing is allowed unaudited).
func (r *ServerEvaluation) unaudited(err error) {
	r.State, r.Reason, r.Mismatch, r.Err = StateDenied, activation.ReasonAuditUnavailable, nil, err
}

// Result is the former name of ServerEvaluation.
//
// Deprecated: use ServerEvaluation, whose name says what it is beside
// ServerStatus.
type Result = ServerEvaluation

// Usable reports whether the server may be used.
func (r ServerEvaluation) Usable() bool { return r.State == StateAllowed }

// NeedsApproval reports whether an approval is all the server lacks: it is
// a local, project or plugin server that activation denied because no
// approval matches its identity (activation.ReasonNotApproved, or
// activation.ReasonIdentityChanged: see ApprovalChanged). A host asks the
// user, showing the Projection (what runs, where it connects), and calls
// Host.Approve. It is false when approving would not help: an unknown
// repository (activation.ReasonRepositoryUnknown: the profile's Trust is
// nil or cannot tell, see GitWorkspace), an untrusted workspace
// (NeedsTrustedWorkspace), a definition that did not resolve, and a
// decision that failed (Err set).
func (r ServerEvaluation) NeedsApproval() bool {
	return r.State == StateDenied && r.Err == nil &&
		(r.Reason == activation.ReasonNotApproved || r.Reason == activation.ReasonIdentityChanged)
}

// ApprovalChanged reports whether the server was approved once but its
// definition or workspace changed since (activation.ReasonIdentityChanged):
// Mismatch names what changed (activation.Field* words). NeedsApproval is
// true too; a host says "changed since you approved it".
func (r ServerEvaluation) ApprovalChanged() bool {
	return r.State == StateDenied && r.Err == nil && r.Reason == activation.ReasonIdentityChanged
}

// NeedsTrustedWorkspace reports whether the definition requires a trusted
// workspace and the host's workspace trust says it is not
// (activation.ReasonWorkspaceUntrusted): a host asks the user to trust the
// workspace (WorkspaceOptions.Trusted, Workspace.SetTrusted) and evaluates
// again.
func (r ServerEvaluation) NeedsTrustedWorkspace() bool {
	return r.State == StateDenied && r.Err == nil && r.Reason == activation.ReasonWorkspaceUntrusted
}

// NeedsVariables reports whether the definition names variables the
// host's Config.Lookup does not set (definition.ReasonUnsetVariable):
// Missing lists them; a host asks the user to set them and evaluates
// again.
func (r ServerEvaluation) NeedsVariables() bool {
	return r.State == StateUnresolved && len(r.Missing) > 0
}

// Evaluation is the result of one run of the flow over a set of sources.
type Evaluation struct {
	// Servers holds one ServerEvaluation per defined name, sorted by name.
	Servers []ServerEvaluation
	// Problems lists every source problem (see definition.Resolve).
	Problems []definition.SourceProblem
}

// Server returns the ServerEvaluation named name and true, or false when no source
// defines it.
func (e Evaluation) Server(name string) (ServerEvaluation, bool) {
	i := sort.Search(len(e.Servers), func(i int) bool { return e.Servers[i].Name >= name })
	if i < len(e.Servers) && e.Servers[i].Name == name {
		return e.Servers[i], true
	}
	return ServerEvaluation{}, false
}

// Config is what a host decides about a Host beyond its ports.
type Config struct {
	// Lookup expands ${VAR} templates. Core never reads the environment:
	// a host that wants it passes os.LookupEnv. Nil means every variable
	// is unset.
	Lookup definition.Lookup
	// Actor labels the grants and revokes this Host records ("cli", a user
	// name). Empty means "host".
	Actor string
	// Now returns the current time for approvals and audit records; nil
	// means time.Now.
	Now func() time.Time

	// Authenticators registers, by server id, the ports.Authenticator the
	// host offers for an HTTP server (an OAuth sign-in, a token source):
	// every request to that server asks it for headers, which override the
	// definition's static headers of the same name. It is used as is,
	// whatever the definition asks for (oauth, a headersHelper). It is
	// keyed by server id alone: a definition of that name from any tier
	// gets it, so it should refuse an AuthRequest whose Origin it does not
	// serve (activation binds a project or plugin server's URL to its
	// approval). Ignored for stdio servers. A nil Authenticator is a
	// construction error (ReasonAuthenticatorNil).
	Authenticators map[string]ports.Authenticator
	// HelperAllowList is the host's allow-list of header helper command
	// lines: a definition's headersHelper runs only when it equals one
	// entry element by element (same program, same arguments, same count;
	// the definition's argv is never expanded). nil allows none: every
	// definition with a headersHelper is refused
	// (ReasonHeaderHelperNotAllowed).
	HelperAllowList [][]string
	// HelperEnv is the whole environment of a header helper, as KEY=VALUE
	// entries with distinct keys; nil means an empty environment (a helper
	// never inherits the host's). A malformed entry is a construction error
	// (httptransport.ReasonHelperEnvInvalid).
	HelperEnv []string
	// Authority decides every stdio launch (allowed root, baseline
	// environment); see NewRootAuthority and NewEnvAuthority. nil means
	// every stdio launch is refused (ReasonNoProcessAuthority): a
	// definition never grants itself execution authority. A managed, user
	// or plugin server whose definition sets no cwd runs in a fresh, empty,
	// private directory instead of the granted root (the authority is
	// still asked, with the definition's own cwd; see workdir.go), so a
	// server trusted in every workspace never runs in the one opened; a
	// project or local server without cwd runs in the granted root.
	Authority ports.ProcessAuthority
	// Egress admits every HTTP URL before any attempt and every dialled
	// address at dial time. nil means core/egress's strict default (https
	// to public addresses, http to loopback only).
	Egress ports.EgressPolicy
	// HTTP adjusts the HTTP transports (TLS roots, resolver, receive cap,
	// trace origins); nil means httptransport's strict defaults. The OAuth
	// client's requests use the same settings.
	HTTP *httptransport.Options
	// OAuth turns on mcpward's OAuth client for definitions that ask for
	// oauth (see OAuthConfig); nil offers no sign-in, and such definitions
	// are refused by name (ReasonOAuthSignInUnavailable) unless
	// Authenticators registers one for them.
	OAuth *OAuthConfig
	// Stdio adjusts the stdio transports (receive cap, close graces); nil
	// means stdiotransport's defaults.
	Stdio *stdiotransport.Options
	// Logger is the host's logger, passed to the supervisor of every
	// server Connect starts (supervisor.Options.Logger, unless
	// ConnectOptions.Supervisor sets its own): it gets one Error record per
	// panic recovered at a server's boundary, with the server id, the
	// reason "panic" and the stack, never server text; and the servers'
	// own log messages, masked and sanitized (see ServerLogLevel). nil
	// discards them.
	Logger *slog.Logger
	// ServerLogLevel is the least level of the servers' own log messages
	// (MCP notifications/message) the Host asks for and passes to Logger:
	// a server that declares the logging capability is sent
	// logging/setLevel after initialize, and each message it sends
	// becomes one Logger record (MsgServerLog: the MCP level mapped by
	// LevelOf, the text masked like Fleet.ServerStderr and sanitized,
	// ServerLogBurst and ServerLogRate per server, the rest dropped and
	// counted). The zero value is slog.LevelInfo; a Logger that enables
	// only higher levels raises it; ServerLogsOff, or a nil Logger, asks
	// for none.
	ServerLogLevel slog.Level

	// TracerProvider, when non-nil, gets a client span for every MCP
	// request of every session this Host connects, by the OpenTelemetry
	// semantic conventions for MCP (see telemetry.go and README,
	// "Observability"). No attribute or event ever carries a secret, a
	// header value, an environment value, an argument or a result. nil
	// records no span and costs nothing.
	TracerProvider trace.TracerProvider
	// MeterProvider, when non-nil, gets the mcp.client.operation.duration
	// and mcp.client.session.duration histograms (same attributes as the
	// spans). nil records no metric and costs nothing.
	MeterProvider metric.MeterProvider
}

// DefaultActor is the actor label of a Config without one.
const DefaultActor = "host"

// Host is the facade a host program drives: it evaluates sources, and
// approves and revokes servers by name. It is safe for concurrent use.
type Host struct {
	decider   *activation.Decider
	approvals ports.ApprovalStore
	audit     ports.AuditLog
	tokens    ports.TokenStore
	locker    ports.Locker
	auth      *Authentication
	dialer    *Dialer
	lookup    definition.Lookup
	actor     string
	now       func() time.Time
	logger    *slog.Logger
	// serverLogLevel is Config.ServerLogLevel (logs.go).
	serverLogLevel slog.Level
	// tel records the sessions' requests; nil when Config gave no
	// provider (telemetry.go).
	tel *telemetry
	// admitStdio is true when the host gave a process authority: only
	// then is a stdio target put to the launch admission at evaluation
	// (without one every launch is refused by name at connect, and a Host
	// that only evaluates has nothing to learn from that).
	admitStdio bool
}

// newDecider returns the activation Decider over the given ports; trust may
// be nil (an untrusted workspace of unknown repository). It is a Wire
// provider.
func newDecider(approvals ports.ApprovalStore, audit ports.AuditLog, trust ports.WorkspaceTrust, cfg Config) (*activation.Decider, error) {
	return activation.New(activation.Options{Approvals: approvals, Audit: audit, Trust: trust, Now: cfg.Now})
}

// newHost returns a Host. tokens and locker may be nil for a host that
// never signs in anywhere; they are kept for the OAuth flow and checked by
// Check. auth decides authentication during Evaluate and must be the one
// dialer authenticates with (newDialer). It is a Wire provider.
func newHost(d *activation.Decider, approvals ports.ApprovalStore, audit ports.AuditLog, tokens ports.TokenStore, locker ports.Locker, auth *Authentication, dialer *Dialer, cfg Config) *Host {
	actor := cfg.Actor
	if actor == "" {
		actor = DefaultActor
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	if auth == nil {
		// The strictest decision: no Authenticator, no helper allowed.
		auth = &Authentication{needs: map[string][]need{}}
	}
	return &Host{
		decider:   d,
		approvals: approvals,
		audit:     audit,
		tokens:    tokens,
		locker:    locker,
		auth:      auth,
		dialer:    dialer,
		lookup:    cfg.Lookup,
		actor:     actor,
		now:       now,
		logger:    cfg.Logger,

		serverLogLevel: cfg.ServerLogLevel,

		admitStdio: cfg.Authority != nil,
		tel:        newTelemetry(cfg),
	}
}

// Tokens returns the token store of the deployment profile (nil when the
// host gave none).
func (h *Host) Tokens() ports.TokenStore { return h.tokens }

// Dialer returns the Dialer of the deployment: it connects the targets of
// the servers this Host evaluated, with the authentication Evaluate
// decided.
func (h *Host) Dialer() *Dialer { return h.dialer }

// Evaluate runs the flow over srcs and decides about every defined name.
// The order of srcs matters only for the order of Problems. Each server
// that resolves and materializes is decided by activation (which appends
// one audit record per decision); a failure to decide is kept in that
// server's ServerEvaluation.Err with StateDenied, never returned for the whole set.
//
// The decisions' records are made durable together, in one write of the
// audit log where it is a ports.AuditQueue (activation.Decider.DecideDeferred
// and Flush) rather than one fsync per server, before Evaluate returns; when
// that fails every decided server is StateDenied with
// activation.ReasonAuditUnavailable and the refusal in Err.
func (h *Host) Evaluate(ctx context.Context, srcs []definition.Source) Evaluation {
	ev, _ := h.evaluate(ctx, srcs)
	if err := h.decider.Flush(ctx); err != nil {
		ev.unaudited(err)
	}
	return ev
}

// unaudited makes every decided server of ev unaudited (see
// ServerEvaluation.unaudited) and returns their names.
func (ev *Evaluation) unaudited(err error) []string {
	var names []string
	for i := range ev.Servers {
		if ev.Servers[i].decided {
			ev.Servers[i].unaudited(err)
			names = append(names, ev.Servers[i].Name)
		}
	}
	return names
}

// Preview is Evaluate without an audit record: each decision is
// activation.Decider.Preview's, the same rules and results, recorded
// nowhere. It is for what only shows the configuration (a listing, a
// diagnosis, a shell completion) and connects nothing: a host that goes on
// to connect or call uses Evaluate, or Connect, which decides again and
// records it.
func (h *Host) Preview(ctx context.Context, srcs []definition.Source) Evaluation {
	ev, _ := h.evaluateWith(ctx, srcs, h.decider.Preview)
	return ev
}

// evaluate is Evaluate without the Flush of the decisions' records (the
// caller flushes: Evaluate, Fleet.add), also returning the resolution it
// evaluated, so a caller that needs it (Fleet.add) does not decode the
// sources again.
func (h *Host) evaluate(ctx context.Context, srcs []definition.Source) (Evaluation, definition.Resolution) {
	return h.evaluateWith(ctx, srcs, h.decider.DecideDeferred)
}

// evaluateWith is evaluate with decide as the decision.
func (h *Host) evaluateWith(ctx context.Context, srcs []definition.Source, decide func(context.Context, activation.Subject) (activation.Decision, error)) (Evaluation, definition.Resolution) {
	res := h.resolve(srcs)
	ev := Evaluation{Servers: make([]ServerEvaluation, len(res.Servers)), Problems: res.Problems}
	for i, s := range res.Servers {
		sctx, span := h.tel.evaluateSpan(ctx)
		r := h.materialize(sctx, res, s)
		if r.State == StateAllowed && r.subject != nil {
			dec, err := decide(sctx, *r.subject)
			r.Reason, r.Identity, r.Mismatch, r.Err = dec.Reason, dec.Identity, dec.Mismatch, err
			r.decided = true
			if !dec.Allowed {
				r.State = StateDenied
			}
		}
		endEvaluate(span, r)
		ev.Servers[i] = r
	}
	return ev, res
}

// Approve grants an approval of the exact current identity of the server
// named name (server id, tier, origin, fingerprint, security identity and
// the workspace facts) and returns it. It refuses, with a *refusal.Error:
// an unknown name (ReasonUnknownServer), a name that does not resolve to a
// usable definition (ReasonNotApprovable), and everything
// activation.Decider.Grant refuses (a managed or user server needs no
// approval: activation.ReasonApprovalNotNeeded).
func (h *Host) Approve(ctx context.Context, srcs []definition.Source, name string) (_ ports.Approval, err error) {
	ctx, end := h.tel.stepSpan(ctx, SpanApprove)
	defer func() { end(err) }()
	s, err := h.subject(ctx, srcs, name)
	if err != nil {
		return ports.Approval{}, err
	}
	return h.decider.Grant(ctx, s, h.actor)
}

// Revoke removes the approval of the exact current identity of the server
// named name. It refuses as Approve does, and with
// activation.ReasonApprovalNotFound when no approval has that identity.
func (h *Host) Revoke(ctx context.Context, srcs []definition.Source, name string) (err error) {
	ctx, end := h.tel.stepSpan(ctx, SpanRevoke)
	defer func() { end(err) }()
	s, err := h.subject(ctx, srcs, name)
	if err != nil {
		return err
	}
	return h.decider.Revoke(ctx, s, h.actor)
}

// RevokeAll removes every approval recorded for the server id name,
// whatever the identity it was bound to (so an approval of a definition
// that has since changed or gone goes too), and returns how many it removed.
// When the approval store is a ports.ApprovalVerifier it first removes the
// approvals of name the store refuses as replayed (put back without its
// key), which would otherwise keep every approval of name unreadable,
// appending one ports.AuditRevoke record (ReasonReplayedRemoved) when it
// removed any; they count in the number returned.
func (h *Host) RevokeAll(ctx context.Context, name string) (_ int, err error) {
	ctx, end := h.tel.stepSpan(ctx, SpanRevoke)
	defer func() { end(err) }()
	removed := 0
	if v, ok := h.approvals.(ports.ApprovalVerifier); ok && name != "" {
		n, err := v.RemoveReplayed(ctx, name)
		if err != nil {
			return 0, storeFailure("approvals", err)
		}
		if n > 0 {
			removed = n
			rec := ports.AuditRecord{Time: h.now(), Action: ports.AuditRevoke, Identity: ports.Identity{ServerID: name},
				Outcome: activation.OutcomeRevoked, Reason: ReasonReplayedRemoved, Actor: h.actor}
			if err := h.audit.Append(ctx, rec); err != nil {
				return removed, storeFailure("audit", err)
			}
		}
	}
	n, err := h.decider.RevokeAll(ctx, name, h.actor)
	return removed + n, err
}

// Review returns the approval review of the server named name in srcs:
// definition.ReviewDefinition of the definition that wins its name (what
// the file wrote, credentials masked by their exact extent, and the notes
// the person approving must read). ok is false when no source defines
// name or its winning entry is malformed or ambiguous. A Review holds env
// and header values as written: it is for the person deciding whether to
// approve (show, approve), never for a status view, a log or an error,
// which print the Projection. It reads nothing but srcs.
func (h *Host) Review(srcs []definition.Source, name string) (definition.Review, bool) {
	s, ok := h.resolve(srcs).Server(name)
	if !ok || s.Def == nil {
		return definition.Review{}, false
	}
	return definition.ReviewDefinition(s.Def), true
}

// Check is the outcome of probing one store of the Host.
type Check struct {
	// Name is "approvals", "audit", "tokens" or "locks".
	Name string
	// Err is nil when the store answered, otherwise a *refusal.Error
	// (ReasonStoreUnavailable, ReasonStoreCorrupt, ReasonStoreFailed, or
	// for ports.ErrReplayed the store's own reason word, else
	// ReasonStoreReplayed, with the server it named).
	Err error
}

// probeKey is the key Check reads from the token store and locks.
const probeKey = "mcpward-doctor-probe"

// Check probes every store of the Host without changing anything it keeps:
// it lists approvals (verifies every approval, when the store is a
// ports.ApprovalVerifier), reads the audit log, reads one absent token and
// takes and releases one lock (each bounded by timeout). A nil token store
// or locker is not checked.
func (h *Host) Check(ctx context.Context, timeout time.Duration) []Check {
	run := func(name string, f func(context.Context) error) Check {
		c, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return Check{Name: name, Err: storeFailure(name, f(c))}
	}
	checks := []Check{
		run("approvals", func(c context.Context) error {
			if v, ok := h.approvals.(ports.ApprovalVerifier); ok {
				return v.VerifyApprovals(c)
			}
			_, err := h.approvals.List(c, probeKey)
			return err
		}),
		run("audit", func(c context.Context) error { _, err := h.audit.Records(c); return err }),
	}
	if h.tokens != nil {
		checks = append(checks, run("tokens", func(c context.Context) error {
			_, err := h.tokens.Get(c, probeKey)
			if errors.Is(err, ports.ErrNotFound) {
				return nil
			}
			return err
		}))
	}
	if h.locker != nil {
		checks = append(checks, run("locks", func(c context.Context) error {
			unlock, err := h.locker.Lock(c, probeKey)
			if err != nil {
				return err
			}
			return unlock()
		}))
	}
	return checks
}

// storeFailure maps a store error to a secret-free *refusal.Error naming
// the store, keeping nothing of its text.
func storeFailure(store string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ports.ErrReplayed):
		r := &refusal.Error{Class: refusal.Internal, Reason: ReasonStoreReplayed, Detail: store}
		var re *refusal.Error
		if errors.As(err, &re) && re.Reason != "" {
			// A store's refusal is secret-free by contract: its word and
			// the server it named pass.
			r.Reason, r.Server = re.Reason, re.Server
		}
		return r
	case errors.Is(err, ports.ErrCorrupt):
		return &refusal.Error{Class: refusal.Internal, Reason: ReasonStoreCorrupt, Detail: store}
	case errors.Is(err, ports.ErrUnavailable), errors.Is(err, ports.ErrLockTimeout),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return &refusal.Error{Class: refusal.Transient, Reason: ReasonStoreUnavailable, Detail: store}
	default:
		return &refusal.Error{Class: refusal.Internal, Reason: ReasonStoreFailed, Detail: store}
	}
}

// resolve decodes every source and resolves them.
func (h *Host) resolve(srcs []definition.Source) definition.Resolution {
	docs := make([]definition.Document, len(srcs))
	for i, s := range srcs {
		docs[i] = definition.Decode(s)
	}
	return definition.Resolve(docs)
}

// subject resolves srcs and returns the activation subject of name, or the
// refusal saying why there is none.
func (h *Host) subject(ctx context.Context, srcs []definition.Source, name string) (activation.Subject, error) {
	res := h.resolve(srcs)
	s, ok := res.Server(name)
	if !ok {
		return activation.Subject{}, refusal.New(refusal.Config, ReasonUnknownServer, name)
	}
	r := h.materialize(ctx, res, s)
	if r.State != StateAllowed || r.subject == nil {
		return activation.Subject{}, &refusal.Error{
			Class:  refusal.Config,
			Reason: ReasonNotApprovable,
			Server: name,
			Detail: "server is " + string(r.State) + " (" + r.Reason + ")",
		}
	}
	return *r.subject, nil
}

// materialize turns one resolved name into a ServerEvaluation up to, not including,
// the activation decision: a name that resolved and materialized has
// StateAllowed and a subject, pending Decide. Before that, its target is
// put to the Dialer's admission (see Dialer.admit; a stdio target only
// when Config.Authority is set), which connects and spawns nothing: a target refused there is StateRefused (Class Refused:
// the egress policy, the process authority, a cwd outside the root) or
// StateUnresolved (any other class: a URL that is not http(s), a program
// not on the child's PATH) with the admission's reason and detail.
func (h *Host) materialize(ctx context.Context, res definition.Resolution, s definition.Server) ServerEvaluation {
	r := ServerEvaluation{
		Name:       s.Name,
		Reason:     s.Reason,
		Tier:       s.Winner.Tier,
		Origin:     s.Winner.Origin,
		Field:      s.Field,
		Contenders: slices.Clone(s.Contenders),
		Shadowed:   slices.Clone(s.Shadowed),
	}
	if s.DisabledBy != nil {
		by := *s.DisabledBy
		r.DisabledBy = &by
	}
	switch s.State {
	case definition.StateResolved:
		r.State = StateAllowed
	case definition.StateBlocked:
		r.State = StateBlocked
	case definition.StateDisabled:
		r.State = StateDisabled
	case definition.StateRefused:
		r.State = StateRefused
	default:
		r.State = StateUnresolved
	}
	if s.Def == nil {
		return r
	}
	r.Transport = s.Def.Kind
	m, err := definition.Materialize(s.Def, h.lookup)
	if err != nil {
		p := definition.ProjectDefinition(s.Def)
		r.Projection = &p
		var missing *definition.MissingError
		if errors.As(err, &missing) {
			r.Missing = slices.Clone(missing.Missing)
		}
		var ref *refusal.Error
		if errors.As(err, &ref) {
			r.Detail = ref.Detail
		}
		if r.State == StateAllowed {
			switch reason := refusal.ReasonOf(err); {
			case reason == definition.RefusalSecretInURL:
				// A secret value, expanded, would move the URL's host
				// (Decode refuses what the text alone shows).
				r.State, r.Reason = StateRefused, reason
			case s.PolicyPending && res.PolicyVerdictUnexpanded(s.Def) != "":
				// What it would run is unknown, and a managed deny entry
				// could match it: fail closed.
				r.State, r.Reason, r.Detail = StateRefused, res.PolicyVerdictUnexpanded(s.Def), ""
			default:
				r.State, r.Reason = StateUnresolved, reason
			}
		}
		return r
	}
	p := definition.Project(m)
	r.Projection = &p
	r.Fingerprint = definition.Fingerprint(m)
	if r.State == StateAllowed {
		// The managed policy judges what runs (Resolve decided only the
		// definitions without templates).
		if why := res.PolicyVerdict(m); why != "" {
			r.State, r.Reason = StateRefused, why
		}
	}
	if r.State == StateAllowed {
		kind, ref := h.auth.decide(s.Def, r.Fingerprint)
		r.Auth = kind
		if ref == nil && kind == AuthOAuth {
			ref = h.auth.checkOAuth(s.Name, m.URL.Text, s.Def.OAuth)
		}
		if ref != nil {
			r.State, r.Reason, r.Detail = StateRefused, ref.Reason, ref.Detail
		}
	}
	if r.State == StateAllowed && h.dialer != nil && (s.Def.Kind != definition.KindStdio || h.admitStdio) {
		var ref *refusal.Error
		if err := h.dialer.admit(ctx, targetOf(m, r.Fingerprint)); errors.As(err, &ref) && ref.Class != refusal.Transient {
			switch {
			case s.Def.Kind == definition.KindStdio:
				r.Launch, r.LaunchDetail = ref.Reason, ref.Detail
			case ref.Class == refusal.Refused:
				r.State, r.Reason, r.Detail = StateRefused, ref.Reason, ref.Detail
			default:
				r.State, r.Reason, r.Detail = StateUnresolved, ref.Reason, ref.Detail
			}
		}
	}
	if r.State == StateAllowed {
		r.subject = &activation.Subject{
			ServerID:                 s.Name,
			Tier:                     s.Winner.Tier,
			Origin:                   s.Winner.Origin,
			Fingerprint:              r.Fingerprint,
			Security:                 definition.Endpoint(m),
			RequiresTrustedWorkspace: s.Def.RequiresTrustedWorkspace,
		}
	}
	return r
}

// target returns the connectable ports.Target of the server named name in
// srcs and its ServerEvaluation (as Evaluate would decide it, without the activation
// decision). ok is false when the name is undefined or does not
// materialize. The Target may hold secrets: it is never printed.
func (h *Host) target(ctx context.Context, srcs []definition.Source, name string) (t ports.Target, r ServerEvaluation, ok bool) {
	t, _, r, ok = h.materialTarget(ctx, srcs, name)
	return t, r, ok
}

// materialTarget is target, also returning the materialization the Target
// was built from (nil when ok is false), whose record of secret stretches
// masks what the server prints.
func (h *Host) materialTarget(ctx context.Context, srcs []definition.Source, name string) (ports.Target, *definition.Materialized, ServerEvaluation, bool) {
	res := h.resolve(srcs)
	s, found := res.Server(name)
	if !found || s.Def == nil {
		return ports.Target{}, nil, ServerEvaluation{}, false
	}
	r := h.materialize(ctx, res, s)
	m, err := definition.Materialize(s.Def, h.lookup)
	if err != nil || res.PolicyVerdict(m) != "" {
		return ports.Target{}, nil, r, false
	}
	return targetOf(m, r.Fingerprint), m, r, true
}
