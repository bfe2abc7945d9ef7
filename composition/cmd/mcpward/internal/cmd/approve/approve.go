// Package approve is "mcpward approve NAME": approve a local, project or
// plugin server, bound to its exact definition, source and workspace.
package approve

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/jsonout"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
	"github.com/mcpward/mcpward/core/activation"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Options are approve's inputs.
type Options struct {
	IO   *iostreams.IOStreams
	App  func() (*app.App, error)
	JSON bool
	// Names are the servers to approve (one at least, unless All).
	Names []string
	// All approves every server awaiting approval (not approved yet, or
	// changed since its approval).
	All bool
	// Yes skips the confirmation of All.
	Yes bool
}

// Approval is the JSON shape of a granted approval.
type Approval struct {
	Identity  ports.Identity `json:"identity"`
	GrantedBy string         `json:"grantedBy"`
}

// JSON is approve --json's output for one NAME.
type JSON struct {
	Approval Approval    `json:"approval"`
	Server   view.Server `json:"server"`
}

// Failed is one name a batch could not approve.
type Failed struct {
	Name  string     `json:"name"`
	Error view.Error `json:"error"`
	// Fix is the one line of what to do ("" when none).
	Fix string `json:"fix"`
}

// BatchJSON is approve --json's output for several names or --all.
type BatchJSON struct {
	Approved []JSON   `json:"approved"`
	Failed   []Failed `json:"failed"`
}

// NewCmdApprove returns the approve command; runF, when not nil, replaces
// Run.
func NewCmdApprove(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.App}
	cmd := &cobra.Command{
		Use:   "approve NAME...",
		Short: "Approve local, project or plugin servers for this workspace",
		Long: `Approve each server NAME, defined in a local, project or plugin file. Managed
and user servers are used on your own trust and need no approval.

The approval is bound to the server's name, source file, fingerprint,
endpoint, repository and workspace generation: any change to one of them
needs a new approval. The fingerprint covers the definition as written
(every literal, which variable feeds each value, every default), so any
edit to it asks again, while rotating a credential's value does not. It
binds the definition, not the files it runs: a project server without
"cwd" runs in the workspace, whose files can change what it does. It is
recorded, with an audit record, in the state directory.

After approving, approve repeats every note of the review ("mcpward show
NAME"): text masked in what runs, env that changes which code runs, a
server that runs in the workspace, an internationalized or mixed-script
host. --all lists them before asking.

--all approves every server awaiting approval (denied as not approved, or
as changed since its approval). It first lists them on stderr; on a
terminal it asks before approving; without a terminal it needs --yes (exit
code 2 otherwise). With nothing awaiting approval it says so and exits 0.

Every name is tried, in order; a refusal is reported with why and what
to do, and the others still run.

With --json, for one NAME: {"approval": {"identity", "grantedBy"},
"server"} (a server object, see "mcpward help list", with its review as
"mcpward show NAME --json" gives it). For several names
or --all: {"approved": [those objects], "failed": [{"name", "error":
{"class", "reason", "server", "detail"}, "fix"}]}.

Exit code 1 when any name is refused.`,
		Example: `  $ mcpward show weather      # review it first
  $ mcpward approve weather
  $ mcpward approve weather files
  $ mcpward approve --all --yes`,
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.All {
				if len(args) > 0 {
					return cmdutil.FlagErrorf("approve --all takes no NAME")
				}
				return nil
			}
			return cmdutil.MinimumArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON, opts.Names = f.Globals.JSON, args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "approve every server awaiting approval")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "approve --all without asking (for scripts)")
	return cmd
}

// Run approves opts.Names, or every server awaiting approval with All.
func Run(ctx context.Context, opts *Options) error {
	a, err := opts.App()
	if err != nil {
		return err
	}
	srcs := a.LibrarySources()
	if opts.All {
		names, err := confirmAll(ctx, opts, a)
		if err != nil || names == nil {
			return err
		}
		return batch(ctx, opts, a, names)
	}
	if len(opts.Names) > 1 {
		return batch(ctx, opts, a, opts.Names)
	}
	name := opts.Names[0]
	ap, err := a.Host.Approve(ctx, srcs, name)
	if err != nil {
		if fix := Fix(ctx, a, name, err); fix != "" {
			return &cmdutil.NotedError{Err: err, Note: fix}
		}
		return err
	}
	r, _ := a.Host.Evaluate(ctx, srcs).Server(name)
	rv := review(a, name)
	if opts.JSON {
		j := JSON{Approval: Approval{Identity: ap.Identity, GrantedBy: ap.GrantedBy}, Server: view.ToServer(r)}
		j.Server.Review = rv
		_ = jsonout.Write(opts.IO.Out, j)
		return nil
	}
	Write(opts.IO.Out, ap, r, rv)
	return nil
}

// review returns the approval review of name, nil when it has none.
func review(a *app.App, name string) *definition.Review {
	if rv, ok := a.Host.Review(a.LibrarySources(), name); ok {
		return &rv
	}
	return nil
}

// Awaiting returns the names of the servers awaiting approval: denied as
// not approved, or as changed since their approval.
func Awaiting(ev composition.Evaluation) []composition.ServerEvaluation {
	var out []composition.ServerEvaluation
	for _, r := range ev.Servers {
		if r.State == composition.StateDenied && (r.Reason == activation.ReasonNotApproved || r.Reason == activation.ReasonIdentityChanged) {
			out = append(out, r)
		}
	}
	return out
}

// confirmAll lists what --all would approve and asks on a terminal. It
// returns nil names and nil when nothing awaits approval (having said
// so), ErrSilent when the answer is not yes, and a usage error without a
// terminal and without --yes.
func confirmAll(ctx context.Context, opts *Options, a *app.App) ([]string, error) {
	awaiting := Awaiting(a.Evaluate(ctx))
	if len(awaiting) == 0 {
		if opts.JSON {
			_ = jsonout.Write(opts.IO.Out, BatchJSON{Approved: []JSON{}, Failed: []Failed{}})
		} else {
			fmt.Fprintln(opts.IO.Out, "nothing to approve: no server is awaiting approval")
		}
		return nil, nil
	}
	w := opts.IO.ErrOut
	fmt.Fprintf(w, "%d server%s awaiting approval:\n", len(awaiting), view.Plural(len(awaiting)))
	names := make([]string, len(awaiting))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, r := range awaiting {
		names[i] = r.Name
		endpoint := ""
		if r.Projection != nil {
			endpoint = r.Projection.Endpoint
		}
		fmt.Fprintf(tw, "  %s\t%s %s\t%s\n", termsafe.Line(r.Name), r.Tier, termsafe.Line(r.Origin), termsafe.Line(endpoint))
		if rv := review(a, r.Name); rv != nil {
			for _, n := range view.ReviewNotes(*rv) {
				fmt.Fprintf(tw, "  \t  note: %s\n", n)
			}
		}
	}
	_ = tw.Flush()
	if opts.Yes {
		return names, nil
	}
	if !opts.IO.IsStdinTTY() || opts.IO.In == nil {
		return nil, cmdutil.FlagErrorf("approve --all asks before approving, and stdin is not a terminal: add --yes to approve these %d without asking", len(names))
	}
	fmt.Fprintf(w, "Approve these %d server%s? [y/N] ", len(names), view.Plural(len(names)))
	line, _ := bufio.NewReader(opts.IO.In).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return names, nil
	}
	fmt.Fprintln(w, "nothing approved")
	return nil, cmdutil.ErrSilent
}

// batch approves every name, reporting each, and fails (ErrSilent) when
// any was refused.
func batch(ctx context.Context, opts *Options, a *app.App, names []string) error {
	srcs := a.LibrarySources()
	out := BatchJSON{Approved: []JSON{}, Failed: []Failed{}}
	for _, name := range names {
		ap, err := a.Host.Approve(ctx, srcs, name)
		if err != nil {
			if ctx.Err() != nil {
				return cmdutil.ErrCancelled
			}
			fix := Fix(ctx, a, name, err)
			out.Failed = append(out.Failed, Failed{Name: name, Error: view.ErrorOf(err), Fix: fix})
			if !opts.JSON {
				fmt.Fprintln(opts.IO.ErrOut, view.ErrorText(err))
				if fix != "" {
					fmt.Fprintln(opts.IO.ErrOut, "mcpward: "+termsafe.Line(fix))
				}
			}
			continue
		}
		r, _ := a.Host.Evaluate(ctx, srcs).Server(name)
		rv := review(a, name)
		j := JSON{Approval: Approval{Identity: ap.Identity, GrantedBy: ap.GrantedBy}, Server: view.ToServer(r)}
		j.Server.Review = rv
		out.Approved = append(out.Approved, j)
		if !opts.JSON {
			Write(opts.IO.Out, ap, r, rv)
		}
	}
	if opts.JSON {
		_ = jsonout.Write(opts.IO.Out, out)
	}
	if len(out.Failed) > 0 {
		if !opts.JSON {
			fmt.Fprintf(opts.IO.ErrOut, "mcpward: approved %d of %d\n", len(out.Approved), len(names))
		}
		return cmdutil.ErrSilent
	}
	return nil
}

// Fix is the one line of why and what to do for approve's refusal err of
// name ("" when there is nothing to add). Nothing in it comes from a
// value of the definition.
func Fix(ctx context.Context, a *app.App, name string, err error) string {
	n := termsafe.Line(name)
	switch refusal.ReasonOf(err) {
	case activation.ReasonApprovalNotNeeded:
		why := n + " is a managed or user server"
		if r, ok := a.Evaluate(ctx).Server(name); ok && r.Tier == ports.TierManaged {
			why = n + " is a managed server, used on your administrator's trust"
		} else if ok && r.Tier == ports.TierUser {
			why = n + " is a user server, from your own file, used on your own trust"
		}
		return "why: " + why + ", so it needs no approval; to do: nothing (\"mcpward show " + n + "\" says whether it is usable)"
	case composition.ReasonUnknownServer:
		return "why: no configuration file defines " + n + "; to do: check the name with \"mcpward list\", or define it with \"mcpward add\""
	case composition.ReasonNotApprovable:
		if r, ok := a.Evaluate(ctx).Server(name); ok {
			why, fix := view.Explain(r)
			if fix == "" {
				fix = "see \"mcpward show " + n + "\""
			}
			return "why: " + termsafe.Line(why) + "; to do: " + termsafe.Line(fix)
		}
	}
	return ""
}

// Write writes approve's text: the identity approved, then one "note"
// line for each thing the review flags (rv, nil when there is no review):
// text masked in what runs, env that changes which code runs, a server
// that runs in the workspace, an internationalized or mixed-script host.
func Write(w io.Writer, ap ports.Approval, r composition.ServerEvaluation, rv *definition.Review) {
	id := ap.Identity
	fmt.Fprintf(w, "approved %s (%s %s)\n", termsafe.Line(id.ServerID), id.Tier, termsafe.Line(id.Origin))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  fingerprint\t%s\n", termsafe.Line(id.Fingerprint))
	fmt.Fprintf(tw, "  endpoint\t%s\n", termsafe.Line(id.Security))
	fmt.Fprintf(tw, "  repository\t%s\n", termsafe.Line(id.Repository))
	if rv != nil {
		for _, n := range view.ReviewNotes(*rv) {
			fmt.Fprintf(tw, "  note\t%s\n", n)
		}
	}
	_ = tw.Flush()
	name := termsafe.Line(r.Name)
	if r.Usable() {
		fmt.Fprintf(w, "%s is now allowed (%s)\n", name, termsafe.Line(r.Reason))
		return
	}
	why, fix := view.Explain(r)
	fmt.Fprintf(w, "%s is still %s (%s): %s\n", name, r.State, termsafe.Line(r.Reason), termsafe.Line(why))
	if fix != "" {
		fmt.Fprintf(w, "  fix: %s\n", termsafe.Line(fix))
	}
}
