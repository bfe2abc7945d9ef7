// Package call is "mcpward call SERVER TOOL": connect one server and call
// one of its tools.
package call

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/clock"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/fleet"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/jsonout"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/progress"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/supervisor"
	"github.com/mcpward/mcpward/ports"
)

// Options are call's inputs.
type Options struct {
	IO    *iostreams.IOStreams
	App   func() (*app.App, error)
	Clock clock.Clock
	JSON  bool
	// Server and Tool name the tool (its name on the server).
	Server, Tool string
	// Args is the arguments object, as JSON ("" means {}).
	Args string
	// Timeouts are --connect-timeout and --call-timeout (0: no limit).
	Timeouts fleet.Timeouts
	// ServerStderr is --server-stderr: print the server's stderr tail.
	ServerStderr bool
}

// NewCmdCall returns the call command; runF, when not nil, replaces Run.
func NewCmdCall(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.App, Clock: f.Clock,
		Timeouts: fleet.Timeouts{Connect: fleet.DefaultConnectTimeout, Call: fleet.DefaultCallTimeout}}
	cmd := &cobra.Command{
		Use:   "call SERVER TOOL [--args JSON]",
		Short: "Call SERVER's tool TOOL with a JSON arguments object",
		Long: `Connect the server SERVER (and no other), then call its tool TOOL (the tool's
own name on the server, not the host-facing mcp__SERVER__TOOL) with the
arguments object --args (default {}). The arguments are checked against the
tool's input schema before anything is sent.

The result's text items are printed one after the other; any other item is
shown as a placeholder ([image content]). Text output is for people: every
character that could drive your terminal is shown escaped (\x1b, \r,
\u202e), and every line after the first is indented by two spaces, so a
server cannot print a line that looks like mcpward's own. Use --json for the
exact content.

Connecting may take --connect-timeout per attempt (three attempts); the call
may take --call-timeout without a progress notification from the server:
each one restarts that window, up to one hour in all. When a call runs
longer than a few seconds, a note on stderr says what mcpward is waiting for.

When the server cannot be connected, the line after the error says why, as
far as mcpward knows: its exit status, its program, or its host:port and the
network cause. With --server-stderr, the end of a stdio server's own stderr
is printed on stderr under a heading that says so, with every secret of its
definition and every credential-shaped string masked and every control
character shown escaped.

With --json: {"server", "tool", "is_error", "truncated", "content" (the MCP
content array)}; a failure is {"error": {"class", "reason", "server",
"detail", "failure" {"exit", "program", "endpoint", "cause"}}}.

Exit code 1 when the server cannot be connected, the call fails, or the tool
returns an error result.`,
		Example: `  $ mcpward call example echo --args '{"text":"hello"}'
  $ mcpward call example add --args '{"a":2,"b":3}' --json
  $ mcpward call search query --args '{"q":"mcp"}' --call-timeout 30s`,
		Args: cmdutil.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON, opts.Server, opts.Tool = f.Globals.JSON, args[0], args[1]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Args, "args", "", "the tool's arguments, a `JSON` object (default {})")
	cmd.Flags().Var(cmdutil.DurationValue{D: &opts.Timeouts.Connect}, "connect-timeout",
		"how long one attempt to connect the server may take (0: no limit)")
	cmd.Flags().Var(cmdutil.DurationValue{D: &opts.Timeouts.Call}, "call-timeout",
		"how long the call may take (0: no limit)")
	cmd.Flags().BoolVar(&opts.ServerStderr, "server-stderr", false,
		"print the end of a stdio server's stderr (its own output, secrets masked) on stderr")
	return cmd
}

// Run connects opts.Server and calls its tool opts.Tool.
func Run(ctx context.Context, opts *Options) error {
	a, err := opts.App()
	if err != nil {
		return err
	}
	rep := progress.New(progress.Options{
		Out: opts.IO.ErrOut, Clock: opts.Clock, Live: opts.IO.CanRedraw(), Width: opts.IO.TerminalWidth(),
		Quiet: progress.WaitAfter, ConnectTimeout: opts.Timeouts.Connect,
	})
	rep.Start()
	f := fleet.Connect(ctx, a, []string{opts.Server}, fleet.SupervisorOptions(opts.Timeouts), rep)
	if opts.ServerStderr {
		// After f.Close (deferred next, so run first), which waits for the
		// server's stderr to be read to its end; before the error the
		// command returns is printed.
		defer view.WriteStderrOf(opts.IO.ErrOut, f, []string{opts.Server})
	}
	defer f.Close()
	rep.Finish(nil)
	if ctx.Err() != nil {
		return cmdutil.ErrCancelled
	}
	server := opts.Server
	r := f.Servers()[0]
	switch r.State {
	case composition.StateConnected:
	case composition.StateFailed:
		var err error = &refusal.Error{Class: r.Class, Reason: r.Reason, Server: server, Detail: "the server could not be connected"}
		err = &view.FailedServer{Err: err, Detail: r.Detail}
		var notes []string
		if d, ok := rep.LastAttempt(server); ok && progress.IsTimeout(r.Reason, supervisor.ReasonConnectTimeout, d, opts.Timeouts.Connect) {
			notes = append(notes, progress.TimedOut(d, "--connect-timeout", opts.Timeouts.Connect))
		}
		if why := view.FailureText(r.Detail); why != "" {
			notes = append(notes, server+": "+why)
		}
		if len(notes) > 0 {
			return &cmdutil.NotedError{Err: err, Note: strings.Join(notes, "; ")}
		}
		return err
	case composition.StateUnknown:
		return refusal.New(refusal.Config, composition.ReasonUnknownServer, server)
	default:
		return &refusal.Error{Class: refusal.Refused, Reason: r.Reason, Server: server,
			Detail: "the server is " + string(r.State) + "; run \"mcpward show " + server + "\""}
	}
	args := opts.Args
	if args == "" {
		args = "{}"
	}
	start := opts.clock().Now()
	stop := progress.Wait(opts.IO.ErrOut, opts.Clock, termsafe.Line(server+"/"+opts.Tool))
	res, err := f.Call(ctx, server, opts.Tool, json.RawMessage(args))
	stop()
	if ctx.Err() != nil {
		return cmdutil.ErrCancelled
	}
	if err != nil {
		elapsed := opts.clock().Now().Sub(start)
		if progress.IsTimeout(refusal.ReasonOf(err), fleet.ReasonCallTimeout, elapsed, opts.Timeouts.Call) {
			return &cmdutil.NotedError{Err: err, Note: progress.TimedOut(elapsed, "--call-timeout", opts.Timeouts.Call)}
		}
		return err
	}
	if res.Content == nil {
		res.Content = json.RawMessage("[]")
	}
	if opts.JSON {
		_ = jsonout.Write(opts.IO.Out, view.Call{Server: server, Tool: opts.Tool, IsError: res.IsError, Truncated: res.Truncated, Content: res.Content})
	} else {
		WriteContent(opts.IO.Out, res)
		if res.IsError {
			fmt.Fprintf(opts.IO.ErrOut, "mcpward: %s %s returned an error result\n", termsafe.Line(server), termsafe.Line(opts.Tool))
		}
		if res.Truncated {
			fmt.Fprintln(opts.IO.ErrOut, "mcpward: the result was cut to the tool's size cap")
		}
	}
	if res.IsError {
		return cmdutil.ErrSilent
	}
	return nil
}

func (o *Options) clock() clock.Clock {
	if o.Clock == nil {
		return clock.Real()
	}
	return o.Clock
}

// Indent is what starts every line of a result's text but the first.
const Indent = "  "

// WriteContent writes the items of a result for people: the text items
// one after the other, a placeholder for each other item, every character
// that could drive a terminal escaped (termsafe.Text), and every line but
// the first indented by Indent (an empty line stays empty), so no line of
// a result can pass for one of mcpward's own.
func WriteContent(w io.Writer, res ports.ToolResult) {
	var items []map[string]json.RawMessage
	if json.Unmarshal(res.Content, &items) != nil {
		fmt.Fprintln(w, "[unreadable content]")
		return
	}
	var lines []string
	for _, it := range items {
		var typ, text string
		_ = json.Unmarshal(it["type"], &typ)
		if typ == "text" && json.Unmarshal(it["text"], &text) == nil {
			lines = append(lines, strings.Split(termsafe.Text(text), "\n")...)
			continue
		}
		lines = append(lines, "["+termsafe.Line(typ)+" content]")
	}
	for i, l := range lines {
		if i > 0 && l != "" {
			l = Indent + l
		}
		fmt.Fprintln(w, l)
	}
}
