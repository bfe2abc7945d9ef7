package main

import (
	"encoding/json"
	"fmt"
	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/adapters/oauth"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/core/activation"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/ports"
)

// serverJSON is the stable JSON shape of one server (list --json elements,
// show --json, approve --json's "server").
type serverJSON struct {
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
	Contenders  []provenanceJSON       `json:"contenders,omitempty"`
	Shadowed    []provenanceJSON       `json:"shadowed,omitempty"`
	DisabledBy  *provenanceJSON        `json:"disabledBy,omitempty"`
	Identity    *ports.Identity        `json:"identity,omitempty"`
	// SignIn is the sign-in state of an OAuth server (show only).
	SignIn string `json:"signIn,omitempty"`
}

// provenanceJSON is a tier and origin.
type provenanceJSON struct {
	Tier   ports.Tier `json:"tier"`
	Origin string     `json:"origin"`
}

// errorJSON is the JSON shape of a failure.
type errorJSON struct {
	Class  string `json:"class"`
	Reason string `json:"reason"`
	Server string `json:"server"`
	Detail string `json:"detail"`
}

// approvalJSON is the JSON shape of a granted approval.
type approvalJSON struct {
	Identity  ports.Identity `json:"identity"`
	GrantedBy string         `json:"grantedBy"`
}

// approveJSON is approve --json's output.
type approveJSON struct {
	Approval approvalJSON `json:"approval"`
	Server   serverJSON   `json:"server"`
}

// revokeJSON is revoke --json's output.
type revokeJSON struct {
	Name    string `json:"name"`
	Revoked int    `json:"revoked"`
}

func provenances(ps []definition.Provenance) []provenanceJSON {
	if len(ps) == 0 {
		return nil
	}
	out := make([]provenanceJSON, len(ps))
	for i, p := range ps {
		out[i] = provenanceJSON{Tier: p.Tier, Origin: p.Origin}
	}
	return out
}

// toJSON returns r's JSON shape.
func toJSON(r composition.Result) serverJSON {
	why, fix := explain(r)
	j := serverJSON{
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
		j.DisabledBy = &provenanceJSON{Tier: r.DisabledBy.Tier, Origin: r.DisabledBy.Origin}
	}
	if r.Identity != (ports.Identity{}) {
		id := r.Identity
		j.Identity = &id
	}
	return j
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// dash shows "" as "-".
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// shortFingerprint is the first 12 hex digits of a fingerprint.
func shortFingerprint(fp string) string {
	if len(fp) > 12 {
		return fp[:12]
	}
	return dash(fp)
}

// writeList writes list's table and the source problems.
func writeList(w io.Writer, ev composition.Evaluation) {
	if len(ev.Servers) == 0 {
		fmt.Fprintln(w, "No MCP servers are defined. Run \"mcpward doctor\" to see which files were read.")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tSTATE\tTIER\tTRANSPORT\tFINGERPRINT\tREASON\tORIGIN")
		for _, r := range ev.Servers {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.State, dash(string(r.Tier)),
				dash(string(r.Transport)), shortFingerprint(r.Fingerprint), dash(r.Reason), dash(r.Origin))
		}
		_ = tw.Flush()
	}
	if len(ev.Problems) > 0 {
		fmt.Fprintln(w, "\nSource problems (\"mcpward doctor\" explains each):")
		for _, p := range ev.Problems {
			fmt.Fprintf(w, "  %s %s: %s\n", p.Tier, p.Origin, p.Kind)
		}
	}
}

// quoteArgs joins args for display, quoting those that need it.
func quoteArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\"'\\") || strconv.Quote(a) != `"`+a+`"` {
			out[i] = strconv.Quote(a)
		} else {
			out[i] = a
		}
	}
	return strings.Join(out, " ")
}

// keys shows a key list.
func keys(ks []string, note string) string {
	if len(ks) == 0 {
		return "-"
	}
	return strings.Join(ks, ", ") + note
}

// writeShow writes show's text.
func writeShow(w io.Writer, r composition.Result, signIn string) {
	why, fix := explain(r)
	state := string(r.State)
	if r.Reason != "" {
		state += " (" + r.Reason + ")"
	}
	fmt.Fprintf(w, "%s: %s\n", r.Name, state)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "  %s\t%s\n", k, v) }
	row("why", why)
	if fix != "" {
		row("fix", fix)
	}
	if r.Origin != "" {
		row("source", string(r.Tier)+" "+r.Origin)
	} else {
		row("source", string(r.Tier))
	}
	switch signIn {
	case "":
	case string(oauth.SignedOut):
		row("sign-in", signIn+` (sign in with "mcpward login `+r.Name+`")`)
	default:
		row("sign-in", signIn)
	}
	for _, c := range r.Contenders {
		row("contender", string(c.Tier)+" "+c.Origin)
	}
	for _, s := range r.Shadowed {
		row("shadows", string(s.Tier)+" "+s.Origin+" (not used)")
	}
	if r.DisabledBy != nil {
		row("disabled by", string(r.DisabledBy.Tier)+" "+r.DisabledBy.Origin)
	}
	if r.Field != "" {
		row("field", r.Field)
	}
	if len(r.Missing) > 0 {
		row("missing", strings.Join(r.Missing, ", "))
	}
	if len(r.Mismatch) > 0 {
		row("changed", strings.Join(r.Mismatch, ", "))
	}
	if p := r.Projection; p != nil {
		row("transport", string(p.Transport))
		if p.Command != "" {
			row("command", p.Command)
		}
		if len(p.Args) > 0 {
			row("args", quoteArgs(p.Args))
		}
		if p.Cwd != "" {
			row("cwd", p.Cwd)
		}
		if p.URL != "" {
			row("url", p.URL)
		}
		row("endpoint", dash(p.Endpoint))
		row("env keys", keys(p.EnvKeys, " (values never shown)"))
		row("header keys", keys(p.HeaderKeys, " (values never shown)"))
		if len(p.HeadersHelper) > 0 {
			row("headers helper", quoteArgs(p.HeadersHelper))
		}
		if o := p.OAuth; o != nil {
			row("oauth", fmt.Sprintf("client %s, scopes %s, callback port %d", dash(o.ClientID), dash(strings.Join(o.Scopes, " ")), o.CallbackPort))
		}
		if p.RequiresTrustedWorkspace {
			row("requires", "a trusted workspace")
		}
	}
	row("fingerprint", dash(r.Fingerprint))
	if r.Identity.Repository != "" {
		row("repository", r.Identity.Repository)
	}
	_ = tw.Flush()
}

// writeApproved writes approve's text.
func writeApproved(w io.Writer, ap ports.Approval, r composition.Result) {
	id := ap.Identity
	fmt.Fprintf(w, "approved %s (%s %s)\n", id.ServerID, id.Tier, id.Origin)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  fingerprint\t%s\n", id.Fingerprint)
	fmt.Fprintf(tw, "  endpoint\t%s\n", id.Security)
	fmt.Fprintf(tw, "  repository\t%s\n", id.Repository)
	_ = tw.Flush()
	if r.Usable() {
		fmt.Fprintf(w, "%s is now allowed (%s)\n", r.Name, r.Reason)
		return
	}
	why, fix := explain(r)
	fmt.Fprintf(w, "%s is still %s (%s): %s\n", r.Name, r.State, r.Reason, why)
	if fix != "" {
		fmt.Fprintf(w, "  fix: %s\n", fix)
	}
}

// explain says, in words, why r is or is not usable, and what to do about
// it ("" when nothing is to be done).
func explain(r composition.Result) (why, fix string) {
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

func explainDenied(r composition.Result) (why, fix string) {
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
		"workspace_generation_unavailable":
		return "mcpward could not read or write its state directory, so nothing from this tier can be allowed",
			"check the --state-dir directory (mode 0700, owned by you); \"mcpward doctor\" probes it"
	default:
		return "activation denied it (" + r.Reason + ")", "run \"mcpward doctor\""
	}
}

func explainRefused(r composition.Result) (why, fix string) {
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
	default:
		return "the definition is refused (" + r.Reason + ")", "correct the entry in " + r.Origin
	}
}

func explainUnresolved(r composition.Result) (why, fix string) {
	switch r.Reason {
	case definition.ReasonUnsetVariable:
		return "the definition uses variables that are not set: " + strings.Join(r.Missing, ", "),
			"set them in the environment mcpward runs in, or give a default with ${NAME:-default}"
	case definition.ReasonInvalidTemplate:
		return "a \"${\" does not start a valid ${NAME} or ${NAME:-default} template (" + r.Detail + ")",
			"correct the template in " + r.Origin
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

// explainProblem explains a source problem.
func explainProblem(p definition.SourceProblem) (why, fix string) {
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
	default:
		why, fix = "the source is not usable ("+string(p.Kind)+")", "check how mcpward was invoked"
	}
	if p.Tier == ports.TierManaged {
		why += "; because a managed file is unusable, every server from a lower tier is blocked"
	}
	return why, fix
}
