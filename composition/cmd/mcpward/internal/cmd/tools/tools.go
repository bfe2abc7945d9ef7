// Package tools is "mcpward tools [NAME...]": connect to the usable
// servers (or those named) and print their tools.
package tools

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/clock"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/elicitui"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/fleet"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/jsonout"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/progress"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/ports"
)

// Options are tools' inputs.
type Options struct {
	IO    *iostreams.IOStreams
	App   func() (*app.App, error)
	Clock clock.Clock
	JSON  bool
	// Names are the servers to connect; none means every usable one.
	Names []string
	// ConnectTimeout is --connect-timeout (0: no limit).
	ConnectTimeout time.Duration
	// ServerStderr is --server-stderr: print every stdio server's stderr
	// tail.
	ServerStderr bool
	// HostPorts are --elicitation and --roots.
	HostPorts elicitui.Flags
}

// NewCmdTools returns the tools command; runF, when not nil, replaces Run.
func NewCmdTools(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.App, Clock: f.Clock, ConnectTimeout: fleet.DefaultConnectTimeout}
	cmd := &cobra.Command{
		Use:   "tools [NAME... | SERVER/TOOL]",
		Short: "Connect to the usable servers (or those named) and print their tools",
		Long: `Connect to every usable server, or to the servers named, and print each one's
state and tools: each tool's host-facing name (mcp__SERVER__TOOL), then
SERVER/TOOL (the tool's own name on the server), then the first line of its
description. "mcpward call" accepts either name. "mcpward tools SERVER/TOOL"
connects SERVER and shows that one tool: its description, then each
parameter in words (name, type, required or optional, description); with
--json {"server", "tool", "name", "title", "description", "parameters"
[{"name", "type", "required", "description"}], "input_schema"}.

Tools the definition's includeTools/excludeTools leave out are listed as
rejected (tool_filtered), as are tools the managed policy denies
(policy_denied). A server that is not
usable is never connected; its line says why and what to do.

Progress goes to stderr: "connecting NAME…" when a server starts, each retry,
and each server's outcome as soon as it is known. On a terminal, a live
status block shows every server still connecting with its elapsed time.

Each attempt to connect a server (start it, initialize, list its tools) may
take --connect-timeout; a server gets three attempts.

With --json: an array of {"name", "state" (connected, failed, unknown, or a
state of "mcpward help list"), "class" and "reason" (of a failure; "" when
none), "partial" ({LIST: reason} of lists cut short), "stale", "tools"
[{"name" (host-facing), "server_tool", "description", "input_schema"}],
"rejected" [{"server", "kind", "name", "reason"}], "diagnostics", "detail"
(of a failed server: {"exit", "program", "endpoint", "cause"}, each omitted
when it does not apply)}.

A failed server's line says why, as far as mcpward knows: how its process
ended ("exit status 3"), its program, or its host:port and the network
cause ("127.0.0.1:9 (refused)"). With --server-stderr, the end of each stdio
server's own stderr is printed on stderr under a heading that says so, with
every secret of its definition and every credential-shaped string masked
and every control character shown escaped.

Exit code 1 when a server failed to connect, or a server named is not
connected.`,
		Example: `  $ mcpward tools
  $ mcpward tools example/add
  $ mcpward tools weather files --json
  $ mcpward tools --connect-timeout 2m slow-server`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.Globals.JSON
			if len(args) > 0 {
				opts.Names = args
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().Var(cmdutil.DurationValue{D: &opts.ConnectTimeout}, "connect-timeout",
		"how long one attempt to connect a server may take (0: no limit)")
	cmd.Flags().BoolVar(&opts.ServerStderr, "server-stderr", false,
		"print the end of each stdio server's stderr (its own output, secrets masked) on stderr")
	elicitui.AddFlags(cmd.Flags(), &opts.HostPorts)
	return cmd
}

// Run connects and prints the catalog. It fails when a server failed to
// connect, or when a server named on the command line is not connected.
func Run(ctx context.Context, opts *Options) error {
	a, err := opts.App()
	if err != nil {
		return err
	}
	detailTool := ""
	if len(opts.Names) == 1 {
		if server, tool, ok := splitTool(opts.Names[0]); ok {
			opts.Names, detailTool = []string{server}, tool
		}
	}
	rep := progress.New(progress.Options{
		Out: opts.IO.ErrOut, Clock: opts.Clock, Live: opts.IO.CanRedraw(), Width: opts.IO.TerminalWidth(),
		ConnectTimeout: opts.ConnectTimeout,
	})
	rep.Start()
	hp := fleet.HostPorts{Elicitation: opts.HostPorts.Elicitation(opts.IO)}
	if a.Workspace != nil {
		hp.Roots = opts.HostPorts.RootsOf(a.Workspace.Root)
	}
	f := fleet.ConnectWithPorts(ctx, a, opts.Names, fleet.SupervisorOptions(fleet.Timeouts{Connect: opts.ConnectTimeout}), rep, hp)
	rs := f.Servers()
	if opts.ServerStderr && ctx.Err() == nil {
		names := make([]string, len(rs))
		for i, r := range rs {
			names[i] = r.Name
		}
		// After f.Close (deferred next, so run first), which waits for
		// each server's stderr to be read to its end.
		defer view.WriteStderrOf(opts.IO.ErrOut, f, names)
	}
	defer f.Close()
	if ctx.Err() != nil {
		rep.Finish(nil)
		return cmdutil.ErrCancelled
	}
	rep.Finish(rs)
	if detailTool != "" && len(rs) == 1 && rs[0].State == composition.StateConnected {
		d, err := findTool(rs[0], detailTool)
		if err != nil {
			return err
		}
		if opts.JSON {
			_ = jsonout.Write(opts.IO.Out, d)
		} else {
			WriteDetail(opts.IO.Out, d)
		}
		return nil
	}
	failed := false
	for _, r := range rs {
		if r.State == composition.StateFailed || r.State == composition.StateUnknown ||
			len(opts.Names) > 0 && r.State != composition.StateConnected {
			failed = true
		}
	}
	if opts.JSON {
		out := make([]view.ServerTools, len(rs))
		for i, r := range rs {
			out[i] = view.ToServerTools(r)
		}
		_ = jsonout.Write(opts.IO.Out, out)
	} else {
		Write(opts.IO.Out, rs)
	}
	if failed {
		for _, r := range rs {
			if r.State == composition.StateFailed && !(opts.ServerStderr && r.Detail.Program != "") {
				fmt.Fprintln(opts.IO.ErrOut, "mcpward: hint: "+view.DoctorHint(r.Name, r.Reason, r.Detail))
			}
		}
		return cmdutil.ErrSilent
	}
	return nil
}

// Write writes tools' text.
func Write(w io.Writer, rs []composition.ServerStatus) {
	if len(rs) == 0 {
		fmt.Fprintln(w, "No MCP servers are defined. Run \"mcpward doctor\" to see which files were read.")
		return
	}
	for i, r := range rs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s: %s\n", termsafe.Line(r.Name), termsafe.Line(serverLine(r)))
		if len(r.Tools) > 0 {
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			for _, t := range r.Tools {
				fmt.Fprintf(tw, "  %s\t%s\t%s\n", termsafe.Line(t.Name), termsafe.Line(r.Name+"/"+t.NameOnServer), about(t.ToolSpec))
			}
			_ = tw.Flush()
		} else if r.State == composition.StateConnected {
			fmt.Fprintln(w, "  (no tools)")
		}
		for _, rj := range r.Rejected {
			if rj.Kind == catalog.KindServer {
				continue
			}
			fmt.Fprintf(w, "  rejected %s %s: %s\n", rj.Kind, termsafe.Line(rj.Name), termsafe.Line(rj.Reason))
		}
		for _, d := range r.Diagnostics {
			fmt.Fprintf(w, "  note %s: %s\n", termsafe.Line(d.Tool), termsafe.Line(d.Reason))
		}
	}
}

// serverLine is a server's state with its marks.
func serverLine(r composition.ServerStatus) string {
	switch r.State {
	case composition.StateConnected:
		s := "connected"
		if r.ProtocolVersion != "" {
			s += " (protocol " + r.ProtocolVersion + ", " + composition.ProtocolEra(r.ProtocolVersion) + " era)"
		}
		if len(r.Partial) > 0 {
			kinds := make([]string, 0, len(r.Partial))
			for k, v := range r.Partial {
				kinds = append(kinds, string(k)+" "+v)
			}
			sort.Strings(kinds)
			s += ", PARTIAL (" + strings.Join(kinds, ", ") + ")"
		}
		if r.Stale {
			s += ", STALE"
		}
		if r.Reason != "" {
			s += ", discovery failed (" + r.Class.String() + " " + r.Reason + ")"
		}
		return s
	case composition.StateFailed:
		s := "failed (" + r.Class.String() + " " + r.Reason + ")"
		if why := view.FailureText(r.Detail); why != "" {
			s += ": " + why
		}
		return s
	case composition.StateUnknown:
		return "unknown (no source defines it)"
	}
	s := string(r.State)
	if r.Reason != "" {
		s += " (" + r.Reason + ")"
	}
	if why, fix := view.Explain(r.Evaluation); fix != "" {
		s += ": " + fix
	} else if why != "" && r.State != composition.StateAllowed {
		s += ": " + why
	}
	return s
}

// firstLine is the first line of a description, made safe.
// about is a tool's third column: its title and the first line of its
// description ("Title: description", either alone when the other is
// empty), then the annotation hints the server declared, as
// "(hints: read-only, idempotent)". All of it is the server's, escaped.
func about(s ports.ToolSpec) string {
	out := firstLine(s.Description)
	if title := firstLine(view.ToolTitle(s)); title != "" {
		if out == "" {
			out = title
		} else {
			out = title + ": " + out
		}
	}
	if h := view.HintWords(s.Annotations); h != "" {
		if out != "" {
			out += " "
		}
		out += "(hints: " + h + ")"
	}
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return termsafe.Line(strings.TrimSpace(s))
}
