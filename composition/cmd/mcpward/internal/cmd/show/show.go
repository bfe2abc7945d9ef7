// Package show is "mcpward show NAME": one server's redacted definition,
// fingerprint and source, and exactly why it is or is not usable.
package show

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/jsonout"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
)

// Options are show's inputs.
type Options struct {
	IO   *iostreams.IOStreams
	App  func() (*app.App, error)
	JSON bool
	// Name is the server to show.
	Name string
}

// NewCmdShow returns the show command; runF, when not nil, replaces Run.
func NewCmdShow(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.App}
	return &cobra.Command{
		Use:   "show NAME",
		Short: "One server as written, its fingerprint, source, and why it is or is not usable",
		Long: `Show one server: its state and, in words, why it is or is not usable and what
to do about it; the file that defines it and the ones it shadows; its
definition as the file wrote it, which is what an approval binds: the
command, arguments, env and header values with their ${VAR} templates and
defaults (never a value from your environment), where a stdio server runs,
and only the exact extent of a credential masked, with a digest that tells
two masked texts apart (<redacted:3f2a9c01>); its fingerprint and, for an
OAuth server, whether you are signed in. Notes flag what to read before
approving: text masked in what runs, env that changes which code runs
(PYTHONPATH, NODE_OPTIONS, LD_PRELOAD, ...), a project server that runs in
the workspace, a host that is an internationalized or look-alike name.

With --json: one server object (see "mcpward help list"), plus signIn
(signed_in, signed_out, refresh_needed) for a server with oauth, and review
(the definition as written: command, args, env and headers as
[{"key", "value"}], cwd, workingDirectory, url, and notes as [{"kind",
"field", "marker", "text"}]).

Exit code 1 when NAME is not defined, or activation could not decide.`,
		Example: `  $ mcpward show weather
  $ mcpward show weather --json`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON, opts.Name = f.Globals.JSON, args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
}

// Run shows the server opts.Name.
func Run(ctx context.Context, opts *Options) error {
	a, err := opts.App()
	if err != nil {
		return err
	}
	r, ok := a.Evaluate(ctx).Server(opts.Name)
	if !ok {
		return refusal.New(refusal.Config, composition.ReasonUnknownServer, opts.Name)
	}
	signIn := a.SignInState(ctx, r)
	var rv *definition.Review
	if review, ok := a.Host.Review(a.LibrarySources(), opts.Name); ok {
		rv = &review
	}
	if opts.JSON {
		j := view.ToServer(r)
		j.SignIn = signIn
		j.Review = rv
		_ = jsonout.Write(opts.IO.Out, j)
	} else {
		Write(opts.IO.Out, r, signIn, rv)
	}
	if r.Err != nil {
		return cmdutil.ErrSilent
	}
	return nil
}

// Write writes show's text. rv is the approval review of r's definition
// (nil when it has none): the definition is shown as the file wrote it,
// env and header values included, credentials masked by their exact
// extent, followed by what to notice.
func Write(w io.Writer, r composition.ServerEvaluation, signIn string, rv *definition.Review) {
	why, fix := view.Explain(r)
	state := string(r.State)
	if r.Reason != "" {
		state += " (" + r.Reason + ")"
	}
	fmt.Fprintf(w, "%s: %s\n", termsafe.Line(r.Name), termsafe.Line(state))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "  %s\t%s\n", k, termsafe.Line(v)) }
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
		if rv != nil {
			view.ReviewRows(*rv, row)
		} else {
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
			row("env keys", view.Keys(p.EnvKeys, " (values never shown)"))
			row("header keys", view.Keys(p.HeaderKeys, " (values never shown)"))
			if len(p.HeadersHelper) > 0 {
				row("headers helper", view.QuoteArgs(p.HeadersHelper))
			}
		}
		row("endpoint", view.Dash(p.Endpoint))
		if o := p.OAuth; o != nil {
			row("oauth", fmt.Sprintf("client %s, scopes %s, callback port %d", view.Dash(o.ClientID), view.Dash(strings.Join(o.Scopes, " ")), o.CallbackPort))
		}
		if p.RequiresTrustedWorkspace {
			row("requires", "a trusted workspace")
		}
		if p.IncludeTools != nil {
			if len(*p.IncludeTools) == 0 {
				row("include tools", "none (an empty includeTools admits no tool)")
			} else {
				row("include tools", view.Keys(*p.IncludeTools, " (only these)"))
			}
		}
		if p.ExcludeTools != nil {
			row("exclude tools", view.Keys(*p.ExcludeTools, ""))
		}
		if p.Timeout > 0 {
			row("timeout", (time.Duration(p.Timeout)*time.Millisecond).String()+" per call (shortens --call-timeout, never lengthens it)")
		}
	}
	row("fingerprint", view.Dash(r.Fingerprint))
	if r.Identity.Repository != "" {
		row("repository", r.Identity.Repository)
	}
	if rv != nil {
		for _, n := range view.ReviewNotes(*rv) {
			row("note", n)
		}
	}
	_ = tw.Flush()
}
