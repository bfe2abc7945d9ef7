// Package call is "mcpward call SERVER TOOL": connect one server and call
// one of its tools.
package call

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
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
	"github.com/mcpward/mcpward/core/definition"
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
	// Server and Tool name the tool (its name on the server). When the
	// command got one argument, Server is "" and Tool is that argument: a
	// host-facing name (mcp__SERVER__TOOL) or SERVER/TOOL, resolved by Run.
	Server, Tool string
	// Args is the arguments object, as JSON ("" means {}); --args @FILE
	// and --args - have been read into it by the command.
	Args string
	// ArgPairs are the --arg KEY=VALUE flags, typed by the tool's input
	// schema and added to Args once the tool is known (see mergeArgs).
	ArgPairs []string
	// Timeouts are --connect-timeout and --call-timeout (0: no limit).
	Timeouts fleet.Timeouts
	// ServerStderr is --server-stderr: print the server's stderr tail.
	ServerStderr bool
	// HostPorts are --elicitation and --roots.
	HostPorts elicitui.Flags
	// Progress is --progress: show the call's progress as plain lines on
	// stderr also when it is not a terminal.
	Progress bool
	// quiet, when set, wraps the writer of the call's progress notes so
	// they keep out of an elicitation prompt.
	quiet func(io.Writer) io.Writer
}

// NewCmdCall returns the call command; runF, when not nil, replaces Run.
func NewCmdCall(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.App, Clock: f.Clock,
		Timeouts: fleet.Timeouts{Connect: fleet.DefaultConnectTimeout, Call: fleet.DefaultCallTimeout}}
	cmd := &cobra.Command{
		Use:   "call (SERVER TOOL | SERVER/TOOL | mcp__SERVER__TOOL) [--args JSON]",
		Short: "Call SERVER's tool TOOL with a JSON arguments object",
		Long: `Connect the server SERVER (and no other), then call its tool TOOL with the
arguments object --args (default {}; --args @FILE reads it from a file,
--args - from stdin), plus each --arg KEY=VALUE: VALUE as it is for a
property the tool's schema types as a string (or does not type), as JSON
for any other type (--arg count=3, --arg tags='["a"]'). The tool is named
by two arguments, the server and the tool's own name on it, or by one:
SERVER/TOOL, or the host-facing name mcp__SERVER__TOOL that "mcpward tools"
prints. The arguments
are checked against the tool's input schema before anything is sent. When the
server has no such tool, the closest names it does have are suggested (or,
when the definition's includeTools/excludeTools or the managed policy filters
it out, that is said).

The result's text items are printed one after the other; any other item is
shown as a placeholder ([image content]). Text output is for people: every
character that could drive your terminal is shown escaped (\x1b, \r,
\u202e), and every line after the first is indented by two spaces, so a
server cannot print a line that looks like mcpward's own. Use --json for the
exact content.

Connecting may take --connect-timeout per attempt (three attempts); the call
may take --call-timeout without a progress notification from the server:
each one restarts that window, up to one hour in all. A server whose
definition sets "timeout" (milliseconds) gets that window instead when it is
shorter: a definition can shorten --call-timeout, never lengthen it. When a
call runs longer than a few seconds, a note on stderr says what mcpward is
waiting for.

The call asks the server for progress. When stderr is a terminal, the
server's progress is shown on one line that is redrawn in place
("SERVER/TOOL: 42% message", the server's message shown escaped) and erased
before the result is printed; elsewhere nothing is shown, unless --progress
asks for plain lines (at most one a second). Progress never goes to stdout,
with or without --json.

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
  $ mcpward call example add --arg a=2 --arg b=3
  $ mcpward call example echo --args @args.json
  $ echo '{"text":"hi"}' | mcpward call example echo --args -
  $ mcpward call example/echo --args '{"text":"hello"}'
  $ mcpward call mcp__example__echo --args '{"text":"hello"}'
  $ mcpward call example add --args '{"a":2,"b":3}' --json
  $ mcpward call search query --args '{"q":"mcp"}' --call-timeout 30s`,
		Args: callArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.Globals.JSON
			a, err := readArgs(opts.Args, opts.IO.In)
			if err != nil {
				return err
			}
			opts.Args = a
			if len(args) == 2 {
				opts.Server, opts.Tool = args[0], args[1]
			} else {
				opts.Tool = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Args, "args", "", "the tool's arguments, a `JSON` object (default {}); @FILE reads it from a file, - from stdin")
	cmd.Flags().StringArrayVar(&opts.ArgPairs, "arg", nil, "one argument `KEY=VALUE`, typed by the tool's schema (a string property takes VALUE as it is, any other type as JSON); repeatable, added to --args")
	cmd.Flags().Var(cmdutil.DurationValue{D: &opts.Timeouts.Connect}, "connect-timeout",
		"how long one attempt to connect the server may take (0: no limit)")
	cmd.Flags().Var(cmdutil.DurationValue{D: &opts.Timeouts.Call}, "call-timeout",
		"how long the call may take (0: no limit)")
	cmd.Flags().BoolVar(&opts.ServerStderr, "server-stderr", false,
		"print the end of a stdio server's stderr (its own output, secrets masked) on stderr")
	cmd.Flags().BoolVar(&opts.Progress, "progress", false,
		"show the call's progress on stderr as plain lines when it is not a terminal")
	elicitui.AddFlags(cmd.Flags(), &opts.HostPorts)
	return cmd
}

// callArgs is call's cobra.PositionalArgs: SERVER TOOL, or one argument
// naming the tool as SERVER/TOOL or mcp__SERVER__TOOL.
func callArgs(cmd *cobra.Command, args []string) error {
	switch {
	case len(args) == 2:
		return nil
	case len(args) == 1 && (strings.Contains(args[0], "/") || strings.HasPrefix(args[0], hostPrefix)):
		return nil
	case len(args) == 1:
		return cmdutil.FlagErrorf("%s takes SERVER TOOL, or one argument SERVER/TOOL or mcp__SERVER__TOOL; got %q", cmd.Name(), termsafe.Line(args[0]))
	}
	return cmdutil.FlagErrorf("%s takes 2 argument(s), got %d", cmd.Name(), len(args))
}

// hostPrefix starts every host-facing tool name.
const hostPrefix = "mcp__"

// splitTool resolves a one-argument tool name into the servers that may
// hold it and the name to look up: SERVER/TOOL is one server and its tool
// (server names never hold "/"); mcp__SERVER__TOOL is every defined server
// whose host-facing prefix starts it (a server name may itself hold "__"),
// looked up by host-facing name after connecting.
func splitTool(name string, defined []string) (servers []string, tool string, host bool) {
	if srv, t, ok := strings.Cut(name, "/"); ok && !strings.HasPrefix(name, hostPrefix) {
		return []string{srv}, t, false
	}
	for _, s := range defined {
		if strings.HasPrefix(name, hostPrefix+s+catalog.ToolNameSeparator) || strings.HasPrefix(name, hostPrefix+sanitizedServer(s)) {
			servers = append(servers, s)
		}
	}
	return servers, name, true
}

// sanitizedServer is a loose form of the server part of a sanitized
// host-facing name (see catalog.ToolName): every byte outside
// [A-Za-z0-9_-] as '_', runs of '_' collapsed, a trailing '_' trimmed, at
// most 20 bytes. It only picks candidate servers; the catalog decides.
func sanitizedServer(s string) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < 20; i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			c = '_'
		}
		if c == '_' && strings.HasSuffix(b.String(), "_") {
			continue
		}
		b.WriteByte(c)
	}
	return strings.TrimSuffix(b.String(), "_")
}

// definedNames returns the server names a's sources define (decoded and
// resolved only: nothing is evaluated or connected).
func definedNames(a *app.App) []string {
	srcs := a.LibrarySources()
	docs := make([]definition.Document, len(srcs))
	for i, s := range srcs {
		docs[i] = definition.Decode(s)
	}
	res := definition.Resolve(docs)
	out := make([]string, len(res.Servers))
	for i, s := range res.Servers {
		out[i] = s.Name
	}
	return out
}

// Run connects opts.Server and calls its tool opts.Tool (see Options for
// the one-argument forms).
func Run(ctx context.Context, opts *Options) error {
	a, err := opts.App()
	if err != nil {
		return err
	}
	if opts.Server == "" {
		servers, tool, host := splitTool(opts.Tool, definedNames(a))
		switch {
		case len(servers) == 0:
			return &refusal.Error{Class: refusal.Config, Reason: composition.ReasonUnknownServer,
				Detail: "no defined server's tools are named like that; \"mcpward tools\" lists them"}
		case !host:
			opts.Server, opts.Tool = servers[0], tool
		default:
			return runHostName(ctx, opts, a, servers, tool)
		}
	}
	rep := progress.New(progress.Options{
		Out: opts.IO.ErrOut, Clock: opts.Clock, Live: opts.IO.CanRedraw(), Width: opts.IO.TerminalWidth(),
		Quiet: progress.WaitAfter, ConnectTimeout: opts.Timeouts.Connect,
	})
	rep.Start()
	f := fleet.ConnectWithPorts(ctx, a, []string{opts.Server}, fleet.SupervisorOptions(opts.Timeouts), rep, hostPorts(opts, a))
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
	return callConnected(ctx, opts, f, f.Servers()[0], rep)
}

// runHostName connects every candidate server of a host-facing tool name
// and calls the one whose catalog holds it.
func runHostName(ctx context.Context, opts *Options, a *app.App, servers []string, host string) error {
	rep := progress.New(progress.Options{
		Out: opts.IO.ErrOut, Clock: opts.Clock, Live: opts.IO.CanRedraw(), Width: opts.IO.TerminalWidth(),
		Quiet: progress.WaitAfter, ConnectTimeout: opts.Timeouts.Connect,
	})
	rep.Start()
	f := fleet.ConnectWithPorts(ctx, a, servers, fleet.SupervisorOptions(opts.Timeouts), rep, hostPorts(opts, a))
	defer f.Close()
	rep.Finish(nil)
	if ctx.Err() != nil {
		return cmdutil.ErrCancelled
	}
	rs := f.Servers()
	for _, r := range rs {
		for _, t := range r.Tools {
			if t.Name == host {
				opts.Server, opts.Tool = r.Name, t.NameOnServer
				return callConnected(ctx, opts, f, r, rep)
			}
		}
	}
	// Not found: report as for the longest candidate (the most specific
	// server name), with its suggestions.
	r := rs[0]
	for _, c := range rs[1:] {
		if len(c.Name) > len(r.Name) {
			r = c
		}
	}
	opts.Server, opts.Tool = r.Name, host
	return callConnected(ctx, opts, f, r, rep)
}

// callConnected calls opts.Tool on r, one server of the connected fleet f.
func callConnected(ctx context.Context, opts *Options, f *composition.Fleet, r composition.ServerStatus, rep *progress.Reporter) error {
	server := opts.Server
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
		hint := ""
		if !opts.ServerStderr || r.Detail.Program == "" {
			hint = view.DoctorHint(server, r.Reason, r.Detail)
		}
		return &cmdutil.NotedError{Err: err, Note: strings.Join(notes, "; "), Hint: hint}
	case composition.StateUnknown:
		return refusal.New(refusal.Config, composition.ReasonUnknownServer, server)
	default:
		return &refusal.Error{Class: refusal.Refused, Reason: r.Reason, Server: server,
			Detail: "the server is " + string(r.State) + "; run \"mcpward show " + server + "\""}
	}
	var schema json.RawMessage
	for _, t := range r.Tools {
		if t.NameOnServer == opts.Tool {
			schema = t.InputSchema
		}
	}
	args, err := mergeArgs(opts.Args, opts.ArgPairs, schema)
	if err != nil {
		return err
	}
	if args == "" {
		args = "{}"
	}
	start := opts.clock().Now()
	notes := opts.IO.ErrOut
	if opts.quiet != nil {
		notes = opts.quiet(notes)
	}
	label := termsafe.Line(server + "/" + opts.Tool)
	show := progress.StartCall(progress.CallOptions{Out: notes, Clock: opts.Clock, Label: label, Width: opts.IO.TerminalWidth(),
		Live: opts.IO.CanRedraw(), Plain: opts.Progress || opts.IO.IsStderrTTY()})
	stop := progress.Wait(show.Above(notes), opts.Clock, label)
	// Always asked for, shown or not: the server's progress keeps a long
	// call within --call-timeout.
	res, err := f.CallServerTool(ports.WithProgress(ctx, show.Report), server, opts.Tool, json.RawMessage(args))
	stop()
	show.Stop()
	if ctx.Err() != nil {
		return cmdutil.ErrCancelled
	}
	if err != nil && refusal.ReasonOf(err) == composition.ReasonUnknownTool {
		if note := suggest(r, opts.Tool); note != "" {
			return &cmdutil.NotedError{Err: err, Note: note}
		}
		return err
	}
	if err != nil {
		if note := explainResultError(err); note != "" {
			return &cmdutil.NotedError{Err: err, Note: note}
		}
		elapsed := opts.clock().Now().Sub(start)
		flag, limit := "--call-timeout", opts.Timeouts.Call
		if p := r.Evaluation.Projection; p != nil && p.Timeout > 0 {
			// The definition's "timeout" bounds the call when shorter.
			if d := time.Duration(p.Timeout) * time.Millisecond; limit <= 0 || d < limit {
				flag, limit = `the definition's "timeout"`, d
			}
		}
		if progress.IsTimeout(refusal.ReasonOf(err), fleet.ReasonCallTimeout, elapsed, limit) {
			return &cmdutil.NotedError{Err: err, Note: progress.TimedOut(elapsed, flag, limit)}
		}
		return err
	}
	if res.Content == nil {
		res.Content = json.RawMessage("[]")
	}
	if opts.JSON {
		_ = jsonout.Write(opts.IO.Out, view.Call{Server: server, Tool: opts.Tool, IsError: res.IsError, Truncated: res.Truncated,
			Content: res.Content, StructuredContent: res.StructuredContent})
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

// suggest is the note of an unknown tool on r: why it is absent when the
// catalog rejected it (filtered by the definition, denied by the managed
// policy, or otherwise), else "did you mean" with the closest names the
// server has (by edit distance, at most three), else "".
func suggest(r composition.ServerStatus, tool string) string {
	for _, rj := range r.Rejected {
		if rj.Kind == ports.ListTools && (rj.Name == tool || catalog.ToolName(r.Name, rj.Name) == tool) {
			switch rj.Reason {
			case catalog.ReasonToolFiltered:
				return "the tool " + termsafe.Line(rj.Name) + " is filtered out by the definition's includeTools/excludeTools"
			case catalog.ReasonPolicyDenied:
				return "the tool " + termsafe.Line(rj.Name) + " is denied by your organization's managed policy (deniedTools); ask your administrator"
			default:
				return "the server offered the tool " + termsafe.Line(rj.Name) + ", but it was rejected (" + termsafe.Line(rj.Reason) + ")"
			}
		}
	}
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, t := range r.Tools {
		d := min(editDistance(tool, t.NameOnServer), editDistance(tool, t.Name), editDistance(tool, r.Name+"/"+t.NameOnServer))
		if d <= max(2, len(t.NameOnServer)/3) || strings.Contains(t.NameOnServer, tool) || strings.Contains(tool, t.NameOnServer) {
			cs = append(cs, cand{t.NameOnServer, d})
		}
	}
	if len(cs) == 0 {
		if len(r.Tools) == 0 {
			return ""
		}
		return "\"mcpward tools " + termsafe.Line(r.Name) + "\" lists its tools"
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return a.d - b.d })
	cs = cs[:min(3, len(cs))]
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = termsafe.Line(r.Name + "/" + c.name)
	}
	return "did you mean " + strings.Join(names, ", ") + "?"
}

// editDistance is the Levenshtein distance of a and b in bytes, both cut
// to 256 bytes so a hostile name costs little.
func editDistance(a, b string) int {
	a, b = a[:min(len(a), 256)], b[:min(len(b), 256)]
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// hostPorts are the host ports of a call run: --elicitation and --roots
// (the workspace root).
func hostPorts(opts *Options, a *app.App) fleet.HostPorts {
	hp := fleet.HostPorts{Elicitation: opts.HostPorts.Elicitation(opts.IO)}
	if hp.Elicitation != nil {
		if p, ok := hp.Elicitation.Elicitor.(*elicitui.Prompter); ok {
			opts.quiet = p.Quiet
		}
	}
	if a.Workspace != nil {
		hp.Roots = opts.HostPorts.RootsOf(a.Workspace.Root)
	}
	return hp
}
