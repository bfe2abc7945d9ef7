package editing

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
	"github.com/mcpward/mcpward/core/definition"
)

// JSON is the --json output of add, add-json, remove and get --scope.
type JSON struct {
	// Action is "added", "removed" or "found" (get).
	Action string `json:"action"`
	Name   string `json:"name"`
	Scope  Scope  `json:"scope"`
	File   string `json:"file"`
	// Entry is the entry as written (or removed, or found), redacted: the
	// projection of the definition with its templates unexpanded.
	Entry *definition.Projection `json:"entry"`
	// Problem is why the entry found is malformed or refused (get only):
	// the decoder's word and field, never a value.
	Problem string `json:"problem,omitempty"`
	// Server is the server as the whole configuration now resolves it
	// (see "mcpward help list"); null when it is not defined any more or
	// the configuration could not be evaluated.
	Server *view.Server `json:"server"`
	// LiteralSecrets are the literal credentials kept with
	// --allow-literal-secret (where, never the values).
	LiteralSecrets []LiteralSecret `json:"literalSecrets,omitempty"`
}

// Project is the redacted projection of d as written.
func Project(d *definition.Definition) *definition.Projection {
	if d == nil {
		return nil
	}
	p := definition.ProjectDefinition(d)
	return &p
}

// WriteEntry writes the rows of a redacted entry, indented by two spaces.
func WriteEntry(w io.Writer, p *definition.Projection) {
	if p == nil {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "  %s\t%s\n", k, termsafe.Line(v)) }
	row("transport", string(p.Transport))
	if p.Command != "" {
		row("command", p.Command)
	}
	if len(p.Args) > 0 {
		row("args", view.QuoteArgs(p.Args))
	}
	if p.Cwd != "" {
		row("cwd", p.Cwd)
	}
	if p.URL != "" {
		row("url", p.URL)
	}
	if p.Transport == definition.KindStdio {
		row("env keys", view.Keys(p.EnvKeys, " (values never shown)"))
	} else {
		row("header keys", view.Keys(p.HeaderKeys, " (values never shown)"))
	}
	if len(p.HeadersHelper) > 0 {
		row("headers helper", view.QuoteArgs(p.HeadersHelper))
	}
	if o := p.OAuth; o != nil {
		row("oauth", fmt.Sprintf("client %s, scopes %s, callback port %d", view.Dash(o.ClientID), view.Dash(strings.Join(o.Scopes, " ")), o.CallbackPort))
	}
	if p.RequiresTrustedWorkspace {
		row("requires", "a trusted workspace")
	}
	_ = tw.Flush()
}

// WriteState writes one line of how the configuration now resolves name,
// and a fix line when there is something to do.
func WriteState(w io.Writer, r composition.ServerEvaluation, scope Scope) {
	name := termsafe.Line(r.Name)
	if r.Tier != scope.Tier() {
		fmt.Fprintf(w, "note: the %s entry of %s (%s) takes precedence over this one\n", r.Tier, name, termsafe.Line(r.Origin))
	}
	why, fix := view.Explain(r)
	state := string(r.State)
	if r.Reason != "" {
		state += " (" + r.Reason + ")"
	}
	fmt.Fprintf(w, "%s is %s: %s\n", name, termsafe.Line(state), termsafe.Line(why))
	if fix != "" {
		fmt.Fprintf(w, "  fix: %s\n", termsafe.Line(fix))
	}
}
