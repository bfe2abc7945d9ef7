// Package view holds what several commands show: the stable JSON shapes
// of servers, failures and connections, the words that explain why a
// server is or is not usable, and the small formatting helpers of the
// text output. Text that did not come from the CLI itself goes through
// termsafe before it is printed.
package view

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/core/activation"
	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Server is the stable JSON shape of one server (list --json elements,
// show --json, approve --json's "server").
type Server struct {
	Name        string                 `json:"name"`
	State       composition.State      `json:"state"`
	Usable      bool                   `json:"usable"`
	Reason      string                 `json:"reason"`
	Tier        ports.Tier             `json:"tier"`
	Origin      string                 `json:"origin"`
	Transport   definition.Kind        `json:"transport"`
	Fingerprint string                 `json:"fingerprint"`
	Projection  *definition.Projection `json:"projection"`
	Why         string                 `json:"why"`
	Fix         string                 `json:"fix"`
	Missing     []string               `json:"missing,omitempty"`
	Mismatch    []string               `json:"mismatch,omitempty"`
	Field       string                 `json:"field,omitempty"`
	Detail      string                 `json:"detail,omitempty"`
	Contenders  []Provenance           `json:"contenders,omitempty"`
	Shadowed    []Provenance           `json:"shadowed,omitempty"`
	DisabledBy  *Provenance            `json:"disabledBy,omitempty"`
	Identity    *ports.Identity        `json:"identity,omitempty"`
	// Launch is the stdio launch refusal found without starting the
	// server (composition.ServerEvaluation.Launch), with its why and fix.
	Launch    string `json:"launch,omitempty"`
	LaunchWhy string `json:"launchWhy,omitempty"`
	LaunchFix string `json:"launchFix,omitempty"`
	// SignIn is the sign-in state of an OAuth server (show only).
	SignIn string `json:"signIn,omitempty"`
	// Egress is the egress rule that admits the server's URL, when a rule
	// of the person's or the organization's (not the default) does (list
	// only).
	Egress *EgressRule `json:"egress,omitempty"`
	// Review is the approval review (show and approve only): the
	// definition as written, env and header values included, only a
	// credential's exact extent masked, and what to notice (see
	// definition.Review). Status views (list) never carry it.
	Review *definition.Review `json:"review,omitempty"`
}

// EgressRule is the egress rule that admitted a server: its target, its
// source ("user" or "managed") and whether it allows plain http.
type EgressRule struct {
	Target string `json:"target"`
	Source string `json:"source"`
	HTTP   bool   `json:"http,omitempty"`
}

// Provenance is a tier and origin.
type Provenance struct {
	Tier   ports.Tier `json:"tier"`
	Origin string     `json:"origin"`
}

// Error is the JSON shape of a failure: {"error": Error}.
type Error struct {
	Class  string `json:"class"`
	Reason string `json:"reason"`
	Server string `json:"server"`
	Detail string `json:"detail"`
	// Failure says more about a server that could not be connected (see
	// FailedServer); omitted otherwise.
	Failure *composition.FailureDetail `json:"failure,omitempty"`
}

// FailedServer is the error of a command whose server could not be
// connected: Err (a *refusal.Error) with the server's FailureDetail, which
// the text output prints after the error and --json puts in the error's
// "failure" object.
type FailedServer struct {
	Err    error
	Detail composition.FailureDetail
}

// Error returns Err's text.
func (e *FailedServer) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *FailedServer) Unwrap() error { return e.Err }

// ServerTools is the stable JSON shape of one server of tools --json.
type ServerTools struct {
	Name  string `json:"name"`
	State string `json:"state"`
	// Class is the failure class ("" unless failed, or connected with a
	// failed discovery).
	Class   string            `json:"class"`
	Reason  string            `json:"reason"`
	Partial map[string]string `json:"partial"`
	Stale   bool              `json:"stale"`
	// ProtocolVersion is the MCP protocol version negotiated with the
	// server and Era its era ("modern" from 2026-07-28, "legacy" before);
	// both "" when no session was up.
	ProtocolVersion string               `json:"protocol_version"`
	Era             string               `json:"era"`
	Tools           []Tool               `json:"tools"`
	Rejected        []catalog.Rejected   `json:"rejected"`
	Diagnostics     []catalog.Diagnostic `json:"diagnostics"`
	// Detail says more about a failure (exit status, program, endpoint,
	// network cause); omitted unless failed.
	Detail *composition.FailureDetail `json:"detail,omitempty"`
}

// Tool is one tool of tools --json.
type Tool struct {
	Name        string          `json:"name"`
	ServerTool  string          `json:"server_tool"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	// ServerInputSchema is the input schema as the server wrote it
	// (untrusted; InputSchema is what calls are checked against), omitted
	// when it was too deep to keep.
	ServerInputSchema json.RawMessage `json:"server_input_schema,omitempty"`
	// Title is the tool's title (or its annotations' title), omitted
	// when it has none.
	Title string `json:"title,omitempty"`
	// Hints are the annotation hints the server declared, omitted when
	// it declared none: the server's claims, never checked.
	Hints *Hints `json:"hints,omitempty"`
	// OutputSchema is the tool's narrowed output schema, omitted when it
	// has none.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
}

// Hints are a tool's annotation hints as the server declared them; a
// hint it did not declare is omitted (the protocol's default applies).
type Hints struct {
	ReadOnly    *bool `json:"read_only,omitempty"`
	Destructive *bool `json:"destructive,omitempty"`
	Idempotent  *bool `json:"idempotent,omitempty"`
	OpenWorld   *bool `json:"open_world,omitempty"`
}

// ToolTitle returns the title to show for a tool: its own title, else
// its annotations' title, else "" (unescaped: server text).
func ToolTitle(s ports.ToolSpec) string {
	if s.Title != "" {
		return s.Title
	}
	if s.Annotations != nil {
		return s.Annotations.Title
	}
	return ""
}

// ToHints returns a's hints, nil when a declares none.
func ToHints(a *ports.ToolAnnotations) *Hints {
	if a == nil || a.ReadOnlyHint == nil && a.DestructiveHint == nil && a.IdempotentHint == nil && a.OpenWorldHint == nil {
		return nil
	}
	return &Hints{ReadOnly: a.ReadOnlyHint, Destructive: a.DestructiveHint, Idempotent: a.IdempotentHint, OpenWorld: a.OpenWorldHint}
}

// HintWords renders the hints a declares, in words ("read-only",
// "not destructive", "idempotent", "closed world", ...), "" when none.
// They are the server's claims: shown, never acted on.
func HintWords(a *ports.ToolAnnotations) string {
	if a == nil {
		return ""
	}
	var w []string
	word := func(b *bool, yes, no string) {
		switch {
		case b == nil:
		case *b && yes != "":
			w = append(w, yes)
		case !*b && no != "":
			w = append(w, no)
		}
	}
	word(a.ReadOnlyHint, "read-only", "")
	word(a.DestructiveHint, "destructive", "not destructive")
	word(a.IdempotentHint, "idempotent", "")
	word(a.OpenWorldHint, "open world", "closed world")
	return strings.Join(w, ", ")
}

// Call is call --json's output.
type Call struct {
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	IsError   bool            `json:"is_error"`
	Truncated bool            `json:"truncated"`
	Content   json.RawMessage `json:"content"`
	// StructuredContent is the result's structuredContent as admitted
	// (checked against the tool's output schema when it has one),
	// omitted when the result had none.
	StructuredContent json.RawMessage `json:"structured_content,omitempty"`
}

// SignIn is the --json output of login and logout.
type SignIn struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

func provenances(ps []definition.Provenance) []Provenance {
	if len(ps) == 0 {
		return nil
	}
	out := make([]Provenance, len(ps))
	for i, p := range ps {
		out[i] = Provenance{Tier: p.Tier, Origin: p.Origin}
	}
	return out
}

// ToServer returns r's JSON shape.
func ToServer(r composition.ServerEvaluation) Server {
	why, fix := Explain(r)
	j := Server{
		Name:        r.Name,
		State:       r.State,
		Usable:      r.Usable(),
		Reason:      r.Reason,
		Tier:        r.Tier,
		Origin:      r.Origin,
		Transport:   r.Transport,
		Fingerprint: r.Fingerprint,
		Projection:  r.Projection,
		Why:         why,
		Fix:         fix,
		Missing:     r.Missing,
		Mismatch:    r.Mismatch,
		Field:       r.Field,
		Detail:      r.Detail,
		Contenders:  provenances(r.Contenders),
		Shadowed:    provenances(r.Shadowed),
	}
	if r.DisabledBy != nil {
		j.DisabledBy = &Provenance{Tier: r.DisabledBy.Tier, Origin: r.DisabledBy.Origin}
	}
	j.Launch = r.Launch
	j.LaunchWhy, j.LaunchFix = ExplainLaunch(r)
	if r.Identity != (ports.Identity{}) {
		id := r.Identity
		j.Identity = &id
	}
	return j
}

// ClassOf is the class word of r, "" when r has no failure.
func ClassOf(r composition.ServerStatus) string {
	if r.State == composition.StateFailed || r.State == composition.StateConnected && r.Reason != "" {
		return r.Class.String()
	}
	return ""
}

// ToServerTools returns r's tools --json shape.
func ToServerTools(r composition.ServerStatus) ServerTools {
	j := ServerTools{
		Name: r.Name, State: string(r.State), Class: ClassOf(r), Reason: r.Reason, Stale: r.Stale,
		ProtocolVersion: r.ProtocolVersion, Era: composition.ProtocolEra(r.ProtocolVersion),
		Partial: map[string]string{}, Tools: []Tool{}, Rejected: []catalog.Rejected{}, Diagnostics: []catalog.Diagnostic{},
	}
	for k, v := range r.Partial {
		j.Partial[string(k)] = v
	}
	for _, t := range r.Tools {
		j.Tools = append(j.Tools, Tool{Name: t.Name, ServerTool: t.NameOnServer, Description: t.Description, InputSchema: t.InputSchema, ServerInputSchema: t.ServerInputSchema,
			Title: ToolTitle(t.ToolSpec), Hints: ToHints(t.Annotations), OutputSchema: t.OutputSchema})
	}
	j.Rejected = append(j.Rejected, r.Rejected...)
	j.Diagnostics = append(j.Diagnostics, r.Diagnostics...)
	if r.State == composition.StateFailed && r.Detail != (composition.FailureDetail{}) {
		d := r.Detail
		j.Detail = &d
	}
	return j
}

// AsRefusal returns err's *refusal.Error, or an Internal one (reason
// "internal") that copies nothing of err's text.
func AsRefusal(err error) *refusal.Error {
	var r *refusal.Error
	if errors.As(err, &r) && r != nil {
		return r
	}
	return refusal.New(refusal.Internal, "internal", "")
}

// ErrorOf returns the JSON shape of err (see AsRefusal).
func ErrorOf(err error) Error {
	r := AsRefusal(err)
	e := Error{Class: r.Class.String(), Reason: r.Reason, Server: r.Server, Detail: r.Detail}
	var fs *FailedServer
	if errors.As(err, &fs) && fs.Detail != (composition.FailureDetail{}) {
		d := fs.Detail
		e.Failure = &d
	}
	return e
}

// ErrorText is the one text line of err (see AsRefusal), made safe; an
// internationalized host in its origin is shown both ways (HostBothWays).
func ErrorText(err error) string {
	r := AsRefusal(err)
	if r.Origin != "" {
		c := *r
		c.Origin = HostBothWays(c.Origin)
		r = &c
	}
	return termsafe.Line(r.Error())
}

// HostBothWays shows a URL, an origin ("https://host:443") or an endpoint
// ("host:443") whose host is an internationalized name both ways: its
// ASCII form in place and its Unicode form after it in parentheses
// ("https://xn--pple-43d.com:443 (аpple.com)"), so a look-alike host never
// passes for the one it imitates. Anything else is returned as it is.
func HostBothWays(s string) string {
	if strings.Contains(s, "://") {
		return egress.DisplayURL(s)
	}
	const fake = "x://"
	return strings.TrimPrefix(egress.DisplayURL(fake+s), fake)
}

// Dash shows "" as "-".
func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ShortFingerprint is the first 12 hex digits of a fingerprint.
func ShortFingerprint(fp string) string {
	if len(fp) > 12 {
		return fp[:12]
	}
	return Dash(fp)
}

// QuoteArgs joins args for display, quoting those that need it (a quoted
// argument has its control characters escaped).
func QuoteArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\"'\\") || strconv.Quote(a) != `"`+a+`"` {
			out[i] = termsafe.Line(strconv.Quote(a))
		} else {
			out[i] = termsafe.Line(a)
		}
	}
	return strings.Join(out, " ")
}

// Keys shows a key list, safe for a terminal.
func Keys(ks []string, note string) string {
	if len(ks) == 0 {
		return "-"
	}
	return termsafe.Line(strings.Join(ks, ", ")) + note
}

// Plural is "s" unless n is 1.
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Explain says, in words, why r is or is not usable, and what to do about
// it ("" when nothing is to be done).
func Explain(r composition.ServerEvaluation) (why, fix string) {
	name := r.Name
	switch r.State {
	case composition.StateAllowed:
		if r.Reason == activation.ReasonApproved {
			return "an approval matches this exact definition, source and workspace", ""
		}
		return string(r.Tier) + " servers are used on your own trust", ""
	case composition.StateDenied:
		return explainDenied(r)
	case composition.StateBlocked:
		return "a managed configuration cannot be read, so a server from a lower tier cannot be told apart from one the managed policy would have defined",
			"fix or restore the managed file (\"mcpward doctor\" names it)"
	case composition.StateDisabled:
		by := "a disable overlay"
		if r.DisabledBy != nil {
			by = "disabledMcpServers in " + string(r.DisabledBy.Tier) + " " + r.DisabledBy.Origin
		}
		fix = "remove " + name + " from that disabledMcpServers list"
		if r.DisabledBy != nil && r.DisabledBy.Tier == ports.TierManaged {
			fix = "ask your administrator: a managed overlay disabled it"
		}
		return "disabled by " + by, fix
	case composition.StateRefused:
		return explainRefused(r)
	default:
		return explainUnresolved(r)
	}
}

func explainDenied(r composition.ServerEvaluation) (why, fix string) {
	name := r.Name
	switch r.Reason {
	case activation.ReasonNotApproved:
		return string(r.Tier) + " servers need your approval, bound to this exact definition, its source and this workspace",
			"review it with \"mcpward show " + name + "\", then run \"mcpward approve " + name + "\""
	case activation.ReasonIdentityChanged:
		return "it was approved, but its " + strings.Join(r.Mismatch, ", ") + " changed since; an approval never carries over to a changed server",
			"review it with \"mcpward show " + name + "\", then run \"mcpward approve " + name + "\" again"
	case activation.ReasonWorkspaceUntrusted:
		return "the definition requires a trusted workspace, and this workspace is not trusted",
			"if you trust this workspace, run mcpward with --trust-workspace"
	case activation.ReasonRepositoryUnknown:
		return "the workspace's repository is unknown, so no approval can be bound to it",
			"run mcpward inside the workspace's directory"
	case activation.ReasonApprovalsUnavailable, activation.ReasonAuditUnavailable, activation.ReasonWorkspaceFactsUnavailable,
		app.ReasonGenerationUnavailable:
		return "mcpward could not read or write its state directory, so nothing from this tier can be allowed",
			"check the --state-dir directory (mode 0700, owned by you); \"mcpward doctor\" probes it"
	default:
		return "activation denied it (" + r.Reason + ")", "run \"mcpward doctor\""
	}
}

func explainRefused(r composition.ServerEvaluation) (why, fix string) {
	switch r.Reason {
	case definition.RefusalTransportSSE:
		return "the deprecated HTTP+SSE transport is not supported",
			"if the server speaks Streamable HTTP, set \"type\": \"http\" and its Streamable HTTP URL in " + r.Origin
	case definition.RefusalTransportWS:
		return "a custom WebSocket transport is not supported", "use the server over Streamable HTTP or stdio"
	case definition.RefusalOAuthClientSecret:
		return "a client secret never lives in a definition", "remove oauth.clientSecret from " + r.Origin
	case definition.RefusalHeadersHelperNotArgv:
		return "headersHelper is a shell line; only an exact argv (an array of strings) is run",
			"write headersHelper as a JSON array in " + r.Origin
	case composition.ReasonOAuthSignInUnavailable:
		return "the server asks for OAuth and no sign-in is offered for it here; it is never connected with its static headers alone",
			"use it from a host that offers a sign-in for " + r.Name + " (composition.Config.OAuth or an Authenticator), or remove \"oauth\" if the server does not need it"
	case oauth.ReasonURLInvalid:
		return "the server asks for OAuth, which mcpward performs only over https (a token never travels in clear text)",
			"use the server's https URL in " + r.Origin
	case composition.ReasonHeaderHelperNotAllowed:
		return "its headersHelper command line is not one the host allows; a helper runs only when its exact argv is allow-listed",
			"if you trust that command, allow its exact argv with --allow-header-helper '[\"PROGRAM\", \"ARG\", ...]' (a host program: composition.Config.HelperAllowList)"
	case httptransport.ReasonHelperArgvInvalid:
		return "its headersHelper is not an exact argv starting with an absolute program path",
			"write headersHelper as a JSON array whose first element is an absolute path, in " + r.Origin
	case definition.RefusalSecretInCommand:
		return "a credential-shaped variable (or a template where a credential goes) decides its command; a credential never chooses what runs, because its value is left out of the fingerprint so that rotating it keeps the approval",
			"write the program in \"command\" as text, or through a variable whose name is not credential-shaped, and pass the credential in \"env\", in " + r.Origin
	case definition.RefusalSecretInCwd:
		return "a credential-shaped variable (or a template where a credential goes) decides its working directory; a credential never chooses where a server runs",
			"write \"cwd\" as text, or through a variable whose name is not credential-shaped, in " + r.Origin
	case definition.RefusalSecretInURL:
		return "a credential-shaped variable (or a template where a credential goes) decides the scheme, host or port of its url; a credential never chooses where mcpward connects",
			"write the url's scheme, host and port as text (or through a variable whose name is not credential-shaped) and pass the credential in \"headers\", in " + r.Origin
	case definition.ReasonPolicyDenied:
		return "your organization's managed policy denies this server (deniedMcpServers)",
			"ask your administrator; no file of yours can allow it"
	case definition.ReasonPolicyNotAllowed:
		return "your organization's managed policy allows only the servers it lists (allowedMcpServers), and this one matches none",
			"ask your administrator to allow it; no file of yours can"
	case egress.ReasonHTTPNotLoopback:
		return "plain http is allowed only to loopback, or to a host or range you allow for http; mcpward would refuse to connect to this URL",
			"use the server's https URL in " + r.Origin + "; or, if it is your own network and you accept plain http, run \"mcpward egress allow --http " + egressTarget(r) + "\"" + egressIDN(r)
	case egress.ReasonAddressRefused:
		if strings.Contains(r.Detail, "link-local") {
			return "the egress policy refuses this address (" + r.Detail + "), whatever is allowed: cloud metadata lives there",
				"correct the url in " + r.Origin
		}
		if strings.Contains(r.Detail, "policy") {
			return "a deny rule refuses this address", "\"mcpward egress list\" shows the rules; correct the url in " + r.Origin
		}
		return "the egress policy admits https only to public addresses, and this one is not (" + r.Detail + ")",
			"if it is your own network, allow it: \"mcpward egress allow " + egressTarget(r) + "\"" + egressIDN(r) + " (or its range); otherwise correct the url in " + r.Origin
	case egress.ReasonHostRefused:
		return "a deny rule refuses this host", "\"mcpward egress list\" shows the rules (\"mcpward egress remove HOST\" forgets one of yours)"
	case egress.ReasonSchemeRefused, egress.ReasonOpaqueRefused, egress.ReasonUserinfoRefused, egress.ReasonHostMissing,
		egress.ReasonHostInvalid, egress.ReasonZoneRefused, egress.ReasonPortRefused, egress.ReasonNumericHost,
		egress.ReasonMetadataRefused:
		return "the egress policy refuses this URL (" + r.Reason + "), so mcpward would never connect to it",
			"correct the url in " + r.Origin + " (an https URL to a public host, or http to loopback)"
	default:
		return "the definition is refused (" + r.Reason + ")", "correct the entry in " + r.Origin
	}
}

// egressTarget is the host of r's URL for an "mcpward egress allow"
// line, safe for a terminal; "HOST" when it cannot be told.
func egressTarget(r composition.ServerEvaluation) string {
	if r.Projection == nil {
		return "HOST"
	}
	u, err := url.Parse(r.Projection.URL)
	if err != nil || u.Hostname() == "" || strings.ContainsAny(u.Hostname(), "<>") {
		return "HOST"
	}
	return termsafe.Line(u.Hostname())
}

// egressIDN is " (HOST is UNICODE)" when the host egressTarget names is
// an internationalized name, so a fix that names it in ASCII still shows
// which host it is; "" otherwise.
func egressIDN(r composition.ServerEvaluation) string {
	h := egressTarget(r)
	if u, ok := egress.HostToUnicode(h); ok && u != h {
		return " (" + h + " is " + termsafe.Line(u) + ")"
	}
	return ""
}

// Program returns the command r would run, as projected (secrets masked),
// "" when r is not a stdio server with a projection.
func Program(r composition.ServerEvaluation) string {
	if r.Projection == nil || r.Transport != definition.KindStdio {
		return ""
	}
	return r.Projection.Command
}

// Target is what r runs or connects to, for one line of text: the
// projected command and arguments of a stdio server, the projected URL of
// an http one (secrets masked, safe for a terminal); "-" when unknown.
func Target(r composition.ServerEvaluation) string {
	p := r.Projection
	switch {
	case p == nil:
		return "-"
	case p.Command != "":
		return QuoteArgs(append([]string{p.Command}, p.Args...))
	case p.URL != "":
		return termsafe.Line(p.URL)
	}
	return "-"
}

// ReasonText is r's reason word for one line of text, with the unset
// variables it names ("unset_variable (A, B)") and the launch refusal
// after a semicolon ("not_approved; program_not_found"); "-" when there is
// none.
func ReasonText(r composition.ServerEvaluation) string {
	s := r.Reason
	if r.Reason == definition.ReasonUnsetVariable && len(r.Missing) > 0 {
		s += " (" + strings.Join(r.Missing, ", ") + ")"
	}
	if r.Launch != "" {
		if s != "" {
			s += "; "
		}
		s += r.Launch
	}
	return termsafe.Line(Dash(s))
}

// Intentional reports whether r is unusable by someone's choice rather
// than by a problem: disabled by an overlay, awaiting an approval nobody
// gave yet (activation's not_approved), or refused by the organization's
// managed policy. doctor lists such servers but does not fail for them.
func Intentional(r composition.ServerEvaluation) bool {
	switch {
	case r.State == composition.StateDisabled:
		return true
	case r.State == composition.StateDenied && r.Reason == activation.ReasonNotApproved && r.Err == nil:
		return true
	case r.State == composition.StateRefused &&
		(r.Reason == definition.ReasonPolicyDenied || r.Reason == definition.ReasonPolicyNotAllowed):
		return true
	}
	return false
}

func explainUnresolved(r composition.ServerEvaluation) (why, fix string) {
	switch r.Reason {
	case definition.ReasonUnsetVariable:
		return "the definition uses variables that are not set: " + strings.Join(r.Missing, ", "),
			"set them in the environment mcpward runs in, or give a default with ${NAME:-default}"
	case definition.ReasonInvalidTemplate:
		return "a \"${\" does not start a valid ${NAME} or ${NAME:-default} template (" + r.Detail + ")",
			"correct the template in " + r.Origin
	case httptransport.ReasonURLInvalid:
		return "the url is not an absolute http or https URL, so mcpward would never connect to it",
			"correct the url in " + r.Origin
	case definition.ReasonAmbiguousWithinTier:
		origins := make([]string, len(r.Contenders))
		for i, c := range r.Contenders {
			origins[i] = c.Origin
		}
		return "several " + string(r.Tier) + " sources define it (" + strings.Join(origins, ", ") + "), and none wins",
			"keep one definition of " + r.Name + " in the " + string(r.Tier) + " tier"
	default:
		field := ""
		if r.Field != "" {
			field = ", field " + r.Field
		}
		return "the entry in " + r.Origin + " is malformed (" + r.Reason + field + "); a malformed entry is never replaced by a lower tier's",
			"correct the entry in " + r.Origin
	}
}

// ExplainLaunch says why r's stdio launch would be refused (r.Launch) and
// what to do; "" when r.Launch is "".
func ExplainLaunch(r composition.ServerEvaluation) (why, fix string) {
	prog := Program(r)
	if prog == "" {
		prog = "its program"
	}
	switch r.Launch {
	case "":
		return "", ""
	case stdioProgramNotFound:
		return "the program " + prog + " is not found on the PATH the server would run with, so it could not start",
			"install it, or write its absolute path as \"command\" in " + r.Origin
	case stdioProgramNotExecutable:
		return "the program " + prog + " is not an executable file, so the server could not start",
			"make it executable, or correct \"command\" in " + r.Origin
	case "cwd_not_found", "cwd_not_directory", "cwd_outside_root", "cwd_invalid":
		return "its working directory cannot be used (" + r.Launch + "), so the server could not start",
			"correct \"cwd\" in " + r.Origin
	default:
		return "starting it would be refused (" + r.Launch + ")", "run \"mcpward show " + r.Name + "\""
	}
}

// The stdio launcher's reasons for a program that cannot be run.
const (
	stdioProgramNotFound      = "program_not_found"
	stdioProgramNotExecutable = "program_not_executable"
)

// ExplainProblem explains a source problem.
func ExplainProblem(p definition.SourceProblem) (why, fix string) {
	switch p.Kind {
	case definition.ProblemUnreadable:
		why, fix = "the file cannot be read", "make sure it exists and is a readable file (a file named by a flag must exist)"
	case definition.ProblemMalformedDocument:
		why, fix = "the file is not one valid JSON value (UTF-8, no duplicate mcpServers)", "correct its JSON syntax"
	case definition.ProblemMalformedRoot:
		why, fix = "the file is not a JSON object", "make it {\"mcpServers\": {...}}"
	case definition.ProblemMalformedServers:
		why, fix = "mcpServers is not an object", "make mcpServers an object of NAME: {...} entries"
	case definition.ProblemMalformedOverlay:
		why, fix = "disabledMcpServers is not an array of strings, so it is ignored whole", "make disabledMcpServers an array of server names"
	case definition.ProblemMalformedPolicy:
		why, fix = "its managed policy (allowedMcpServers, deniedMcpServers or deniedTools) is not of the documented shape",
			"make each list an array of {\"serverName\"}, {\"serverCommand\"} or {\"serverUrl\"} entries (deniedTools: an array of strings)"
	default:
		why, fix = "the source is not usable ("+string(p.Kind)+")", "check how mcpward was invoked"
	}
	if p.Tier == ports.TierManaged {
		why += "; because a managed file is unusable, every server from a lower tier is blocked"
	}
	return why, fix
}

// Hint is what a failure line adds for a reason the user can fix with one
// command ("" for any other reason).
func Hint(name, reason string) string {
	switch reason {
	case oauth.ReasonSignInRequired:
		return `; sign in with "mcpward login ` + termsafe.Line(name) + `"`
	case oauth.ReasonStepUpRequired:
		return `; it needs more scope: sign in again with "mcpward login ` + termsafe.Line(name) + `"`
	case oauth.ReasonAuthorizationServerChanged:
		return `; the server moved to another authorization server, so its sign-in was deleted: sign in again with "mcpward login ` + termsafe.Line(name) + `"`
	case oauth.ReasonProofKeyMissing, oauth.ReasonClientSecretExpired, oauth.ReasonWorkloadTokenExpired:
		return `; sign in again with "mcpward login ` + termsafe.Line(name) + `"`
	case httptransport.ReasonLegacySSE:
		return "; the URL is a legacy SSE endpoint: use the server's Streamable HTTP URL (often /mcp)"
	}
	return ""
}

// SignInAgain reports whether a failure of reason is cured by "mcpward
// login NAME".
func SignInAgain(reason string) bool {
	switch reason {
	case oauth.ReasonSignInRequired, oauth.ReasonStepUpRequired, oauth.ReasonAuthorizationServerChanged,
		oauth.ReasonProofKeyMissing, oauth.ReasonClientSecretExpired, oauth.ReasonWorkloadTokenExpired:
		return true
	}
	return false
}

// DoctorHint is the one line that points a failed server to its
// explanation: for a stdio server (d names its program), that
// "mcpward doctor NAME" shows its stderr, where a server says why it
// exited (an npm 404, a missing API key); for any other, that doctor
// diagnoses it; for a legacy SSE endpoint, what URL to use instead. It
// holds no secret: the name and fixed words only.
func DoctorHint(name, reason string, d composition.FailureDetail) string {
	if reason == httptransport.ReasonLegacySSE {
		return "the URL is a legacy SSE endpoint, which mcpward does not speak: use the server's Streamable HTTP URL (often /mcp)"
	}
	cmd := `"mcpward doctor ` + termsafe.Line(name) + `"`
	if d.Program != "" {
		return cmd + " shows its stderr (or run again with --server-stderr)"
	}
	return cmd + " diagnoses it"
}

// Elapsed shows a duration for people: tenths of a second below a minute
// ("0.4s", "30.1s"), whole seconds above ("1m5s").
func Elapsed(d time.Duration) string {
	if d < time.Minute {
		return strconv.FormatFloat(d.Round(100*time.Millisecond).Seconds(), 'f', 1, 64) + "s"
	}
	return d.Round(time.Second).String()
}

// FailureText is a failed server's FailureDetail in words, for the text
// output next to its class and reason: the exit status, the program, the
// endpoint with the network cause, joined by " — " ("exit status 3 —
// program npx", "127.0.0.1:9 (refused)", "127.0.0.1:8080 (HTTP 405)");
// "" when d is empty. It is made
// safe for a terminal.
func FailureText(d composition.FailureDetail) string {
	var parts []string
	if d.Exit != "" {
		parts = append(parts, d.Exit)
	}
	if d.Program != "" {
		parts = append(parts, "program "+d.Program)
	}
	switch {
	case d.Endpoint != "" && d.Status != 0:
		parts = append(parts, d.Endpoint+" (HTTP "+strconv.Itoa(d.Status)+")")
	case d.Endpoint != "" && d.Cause != "":
		parts = append(parts, HostBothWays(d.Endpoint)+" ("+d.Cause+")")
	case d.Endpoint != "":
		parts = append(parts, HostBothWays(d.Endpoint))
	case d.Cause != "":
		parts = append(parts, d.Cause)
	}
	return termsafe.Line(strings.Join(parts, " — "))
}

// StderrHeading is the line above a server's stderr tail: it says the text
// is the server's own output, not mcpward's.
func StderrHeading(name string) string {
	return "--- stderr of " + termsafe.Line(name) + " (the server's own output, secrets masked) ---"
}

// WriteServerStderr writes the stderr tail of server name (as
// composition.Fleet.ServerStderr hands it out) under StderrHeading: every
// line made safe (termsafe.Line) and indented by two spaces, so no line
// can pass for one of mcpward's; "(nothing)" when the tail is empty; and a
// closing line.
func WriteServerStderr(w io.Writer, name, tail string) {
	fmt.Fprintln(w, StderrHeading(name))
	tail = strings.TrimRight(tail, "\n")
	if tail == "" {
		fmt.Fprintln(w, "  (nothing)")
	} else {
		for _, l := range strings.Split(tail, "\n") {
			fmt.Fprintln(w, "  "+termsafe.Line(l))
		}
	}
	fmt.Fprintln(w, "--- end of the stderr of "+termsafe.Line(name)+" ---")
}

// ServerStderr is what composition.Fleet.ServerStderr is: a fleet that
// hands out a server's stderr tail.
type ServerStderr interface {
	ServerStderr(name string) (string, bool)
}

// WriteStderrOf writes the stderr tail of each server of names that has
// one (a stdio server this fleet started; see WriteServerStderr).
func WriteStderrOf(w io.Writer, f ServerStderr, names []string) {
	for _, n := range names {
		if tail, ok := f.ServerStderr(n); ok {
			WriteServerStderr(w, n, tail)
		}
	}
}

// ReviewRows writes the approval review rv as rows (label, value): the
// command, arguments, env entries, cwd and where a stdio server runs, the
// URL, the header entries and the headers helper, as the file wrote them
// (credentials masked as <redacted:DIGEST>). row makes each value safe.
func ReviewRows(rv definition.Review, row func(label, value string)) {
	if rv.Command != "" {
		row("command", rv.Command)
	}
	if len(rv.Args) > 0 {
		row("args", QuoteArgs(rv.Args))
	}
	for i, e := range rv.Env {
		label := ""
		if i == 0 {
			label = "env"
		}
		row(label, e.Key+"="+e.Value)
	}
	if rv.Cwd != "" {
		row("cwd", rv.Cwd)
	}
	switch rv.WorkingDirectory {
	case definition.WorkdirWorkspace:
		row("runs in", "the workspace root (no cwd)")
	case definition.WorkdirNeutral:
		row("runs in", "an empty private directory of its own (no cwd), never the workspace")
	}
	if rv.URL != "" {
		row("url", rv.URL)
	}
	for i, h := range rv.Headers {
		label := ""
		if i == 0 {
			label = "headers"
		}
		row(label, h.Key+": "+h.Value)
	}
	if len(rv.HeadersHelper) > 0 {
		row("headers helper", QuoteArgs(rv.HeadersHelper))
	}
}

// ReviewNotes returns the lines that flag what the person approving must
// notice in rv (see definition.Review): each masked stretch in what runs,
// each env key that changes which code runs, a server that runs in the
// workspace, an internationalized or mixed-script host. Each line is made
// safe for a terminal.
func ReviewNotes(rv definition.Review) []string {
	out := make([]string, len(rv.Notes))
	for i, n := range rv.Notes {
		out[i] = termsafe.Line(n.Text)
	}
	return out
}
