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
	// Wide is --wide: every cell whole, whatever the terminal's width.
	Wide bool
}

// NewCmdList returns the list command; runF, when not nil, replaces Run
// (tests capture the options with it).
func NewCmdList(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.App}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Every server: state, tier, transport, fingerprint, reason",
		Long: `List every server your configuration files define, with its state (allowed,
denied, unresolved, blocked, disabled, refused), the tier and file that define
it, its transport, the start of its fingerprint, the reason word of its state
(with the names of unset variables) and the command or URL it would run or
connect to (secrets masked; an internationalized host shown both ways, as in
xn--pple-43d.com (аpple.com)). Problems with the files themselves follow the
table, then the egress rule that admits each server a rule of yours or your
organization's admits ("mcpward help egress"), any legacy
./.mcpward/local.json that is not read, and the workspace root the files were
found from (the git root, else the nearest directory holding .mcp.json, else
./). "mcpward show NAME" shows the definition as the file wrote it.
On a terminal the table fits its width: the command/URL, origin, reason and
name cells are cut with "…", the widest first; --wide (or output that is
not a terminal) prints them whole.

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
detail, contenders, shadowed, disabledBy, identity, launch, launchWhy and
launchFix (a stdio server that could not start, found without starting it),
and egress {"target", "source", "http"} (the rule that admits it, when one
does).

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
	cmd.Flags().BoolVar(&opts.Wide, "wide", false, "print every cell whole (on a terminal the table is fitted to its width, long cells cut with …)")
	return cmd
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
			if adm, ok := a.EgressAdmission(ctx, r); ok {
				out[i].Egress = &view.EgressRule{Target: adm.Target, Source: adm.Source, HTTP: adm.HTTP}
			}
		}
		_ = jsonout.Write(opts.IO.Out, out)
	} else {
		width := 0
		if opts.IO.IsStdoutTTY() && !opts.Wide {
			width = opts.IO.TerminalWidth()
		}
		WriteWidth(opts.IO.Out, ev, width)
		WriteWorkspace(ctx, opts.IO.Out, a, ev)
	}
	for _, r := range ev.Servers {
		if r.Err != nil {
			return cmdutil.ErrSilent
		}
	}
	return nil
}

// RootWords says how a workspace root was found, for one line of text.
func RootWords(from string) string {
	switch from {
	case app.RootGit:
		return "the git root"
	case app.RootProjectFile:
		return "the nearest directory holding .mcp.json"
	}
	return "the working directory: no git repository, no .mcp.json above it"
}

// SourceWords names an egress rule's source for people: "your rule" or
// "your organization's rule".
func SourceWords(source string) string {
	if source == app.EgressSourceManaged {
		return "your organization's rule"
	}
	return "your rule"
}

// LegacyWords says what became of a legacy ./.mcpward/local.json.
func LegacyWords(s app.LegacyState) string {
	switch s {
	case app.LegacyTracked:
		return "git tracks it, so it is the repository's file, never your private scope"
	case app.LegacyUnknown:
		return "whether git tracks it cannot be told (the git index cannot be read), so it is not read"
	case app.LegacyNotYours:
		return "it is not a regular file of yours, so it is not read"
	case app.LegacyLeftover:
		return "your private file for this workspace already exists, so it is not read: merge it by hand"
	}
	return "it is not read; the next command moves it to your private file"
}

// WriteWorkspace writes what list adds after the table: the egress rule
// that admitted each server a rule (not the default) admits, the legacy
// local files not read, and the workspace root used.
func WriteWorkspace(ctx context.Context, w io.Writer, a *app.App, ev composition.Evaluation) {
	var lines []string
	for _, r := range ev.Servers {
		if adm, ok := a.EgressAdmission(ctx, r); ok {
			what := "https"
			if adm.HTTP {
				what = "https and http"
			}
			lines = append(lines, fmt.Sprintf("  %s\tallow %s (%s)\t%s\n", termsafe.Line(r.Name), termsafe.Line(adm.Target), SourceWords(adm.Source), what))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintln(w, "\nAdmitted by an egress rule (\"mcpward egress list\"):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, l := range lines {
			fmt.Fprint(tw, l)
		}
		_ = tw.Flush()
	}
	for _, l := range a.Legacy {
		fmt.Fprintf(w, "\nNot read: %s: %s (\"mcpward doctor\" explains).\n", termsafe.Line(l.Path), LegacyWords(l.State))
	}
	fmt.Fprintf(w, "\nWorkspace root: %s (%s)\n", termsafe.Line(a.Workspace.Root), RootWords(a.Workspace.RootFrom))
}

// Write writes list's table, every cell whole, and the source problems.
func Write(w io.Writer, ev composition.Evaluation) { WriteWidth(w, ev, 0) }

// WriteWidth is Write with the table fitted to width columns (0: no
// limit): the command/URL, origin, reason and name columns are cut with
// "…", the widest first (view.FitTable).
func WriteWidth(w io.Writer, ev composition.Evaluation, width int) {
	if len(ev.Servers) == 0 {
		fmt.Fprintln(w, "No MCP servers are defined. Run \"mcpward doctor\" to see which files were read.")
	} else {
		rows := [][]string{{"NAME", "STATE", "TIER", "TRANSPORT", "FINGERPRINT", "REASON", "COMMAND/URL", "ORIGIN"}}
		for _, r := range ev.Servers {
			rows = append(rows, []string{termsafe.Line(r.Name), string(r.State), view.Dash(string(r.Tier)),
				view.Dash(string(r.Transport)), termsafe.Line(view.ShortFingerprint(r.Fingerprint)),
				view.ReasonText(r), view.Target(r), termsafe.Line(view.Dash(r.Origin))})
		}
		view.FitTable(w, rows, width, 7, 6, 5, 0)
	}
	if len(ev.Problems) > 0 {
		fmt.Fprintln(w, "\nSource problems (\"mcpward doctor\" explains each):")
		for _, p := range ev.Problems {
			fmt.Fprintf(w, "  %s %s: %s\n", p.Tier, termsafe.Line(p.Origin), p.Kind)
		}
	}
}
