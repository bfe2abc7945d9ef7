// Package list is "mcpward list": every server the configuration defines
// and whether it may be used.
package list

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/jsonout"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
)

// Options are list's inputs.
type Options struct {
	IO   *iostreams.IOStreams
	App  func() (*app.App, error)
	JSON bool
}

// NewCmdList returns the list command; runF, when not nil, replaces Run
// (tests capture the options with it).
func NewCmdList(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.App}
	return &cobra.Command{
		Use:   "list",
		Short: "Every server: state, tier, transport, fingerprint, reason",
		Long: `List every server your configuration files define, with its state (allowed,
denied, unresolved, blocked, disabled, refused), the tier and file that define
it, its transport, the start of its fingerprint, the reason word of its state
(with the names of unset variables) and the command or URL it would run or
connect to (secrets masked, as "mcpward show" masks them). Problems with the files themselves follow the
table.

Everything knowable without connecting is decided here: a URL the egress
policy refuses (plain http to a non-loopback host: http_not_loopback) or that
is not http(s) (url_invalid), a server your organization's managed policy
denies (policy_denied, policy_not_allowed): none of these is listed as
allowed. A stdio server whose program is not on the PATH it would run with
keeps its state (it can be approved before the program is installed) and
its reason gains "; program_not_found" ("launch" in --json).

With --json: an array of server objects, each with name, state, usable,
reason, tier, origin, transport, fingerprint, projection (null when
malformed), why and fix, and when they apply missing, mismatch, field,
detail, contenders, shadowed, disabledBy, identity, and launch, launchWhy and
launchFix (a stdio server that could not start, found without starting it).

Exit code 1 when activation could not decide about some server.`,
		Example: `  $ mcpward list
  $ mcpward list --json
  $ mcpward --project ./other.json list`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.Globals.JSON
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
}

// Run evaluates the sources and prints every server.
func Run(ctx context.Context, opts *Options) error {
	a, err := opts.App()
	if err != nil {
		return err
	}
	ev := a.Evaluate(ctx)
	if opts.JSON {
		out := make([]view.Server, len(ev.Servers))
		for i, r := range ev.Servers {
			out[i] = view.ToServer(r)
		}
		_ = jsonout.Write(opts.IO.Out, out)
	} else {
		Write(opts.IO.Out, ev)
	}
	for _, r := range ev.Servers {
		if r.Err != nil {
			return cmdutil.ErrSilent
		}
	}
	return nil
}

// Write writes list's table and the source problems.
func Write(w io.Writer, ev composition.Evaluation) {
	if len(ev.Servers) == 0 {
		fmt.Fprintln(w, "No MCP servers are defined. Run \"mcpward doctor\" to see which files were read.")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tSTATE\tTIER\tTRANSPORT\tFINGERPRINT\tREASON\tCOMMAND/URL\tORIGIN")
		for _, r := range ev.Servers {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", termsafe.Line(r.Name), r.State, view.Dash(string(r.Tier)),
				view.Dash(string(r.Transport)), termsafe.Line(view.ShortFingerprint(r.Fingerprint)),
				view.ReasonText(r), view.Target(r), termsafe.Line(view.Dash(r.Origin)))
		}
		_ = tw.Flush()
	}
	if len(ev.Problems) > 0 {
		fmt.Fprintln(w, "\nSource problems (\"mcpward doctor\" explains each):")
		for _, p := range ev.Problems {
			fmt.Fprintf(w, "  %s %s: %s\n", p.Tier, termsafe.Line(p.Origin), p.Kind)
		}
	}
}
