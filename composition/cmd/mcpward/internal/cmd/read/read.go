// Package read is "mcpward read SERVER URI": connect one server and read
// one of its resources.
package read

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/clock"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/entries"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/fleet"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/jsonout"
	"github.com/mcpward/mcpward/ports"
)

// Options are read's inputs.
type Options struct {
	IO    *iostreams.IOStreams
	App   func() (*app.App, error)
	Clock clock.Clock
	JSON  bool
	// Server and URI name the resource; a URI holding "{" is one of the
	// server's resource templates, expanded with Args.
	Server, URI string
	// Args is --args: the template's variables, a JSON object of string
	// values ("" means none).
	Args string
	// Timeouts are --connect-timeout and --call-timeout (0: no limit).
	Timeouts fleet.Timeouts
	// Complete is --complete: the variable whose completions to print
	// instead ("" means none).
	Complete string
}

// NewCmdRead returns the read command; runF, when not nil, replaces Run.
func NewCmdRead(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.App, Clock: f.Clock,
		Timeouts: fleet.Timeouts{Connect: fleet.DefaultConnectTimeout, Call: fleet.DefaultCallTimeout}}
	cmd := &cobra.Command{
		Use:   "read SERVER (URI | URI-TEMPLATE --args JSON)",
		Short: "Read the resource URI of SERVER",
		Long: `Connect the server SERVER (and no other), then read the resource URI: one
"mcpward resources" lists, or any other the server serves. A URI holding "{"
is one of the server's resource templates (as "mcpward resources" shows it
after "template"), expanded with the variables of --args, a JSON object of
string values; a variable the template does not have is refused
(unknown_argument), and so is an expansion that would leave the scheme and
host the template itself names (template_origin_mismatch).

Text contents are printed one after the other, a blob as a placeholder with
its size. Every character that could drive your terminal is shown escaped,
and every line after the first is indented by two spaces. At most 1 MiB is
read into mcpward; the rest is cut off and a note on stderr says so. Use
--json for the exact contents.

With --complete VAR and a URI template, nothing is read: the server's
completions of the template variable VAR are printed one per line instead,
for the value --args gives VAR so far ("" when none), with the other
variables of --args as context.

With --json: {"server", "uri", "truncated", "contents" [{"uri", "mime_type",
"text" or "blob" (base64)}]}; with --complete, {"server", "argument",
"values", "total", "has_more"}.

Exit code 1 when the server cannot be connected or the resource cannot be
read.`,
		Example: `  $ mcpward read everything demo://resource/static/document/architecture.md
  $ mcpward read everything 'demo://resource/dynamic/text/{resourceId}' --args '{"resourceId":"3"}'
  $ mcpward read everything demo://resource/dynamic/blob/1 --json`,
		Args: cmdutil.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.Globals.JSON
			opts.Server, opts.URI = args[0], args[1]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Args, "args", "", "a template's variables, a `JSON` object of strings")
	cmd.Flags().StringVar(&opts.Complete, "complete", "", "print the server's completions of this `NAME` (variable; its value so far and the others come from --args) instead")
	cmd.Flags().Var(cmdutil.DurationValue{D: &opts.Timeouts.Connect}, "connect-timeout",
		"how long one attempt to connect the server may take (0: no limit)")
	cmd.Flags().Var(cmdutil.DurationValue{D: &opts.Timeouts.Call}, "call-timeout",
		"how long the read may take (0: no limit)")
	return cmd
}

// Run connects opts.Server and reads opts.URI.
func Run(ctx context.Context, opts *Options) error {
	vars, err := entries.ParseArgs(opts.Args)
	if err != nil {
		return err
	}
	template := strings.Contains(opts.URI, "{")
	if (vars != nil || opts.Complete != "") && !template {
		return cmdutil.FlagErrorf("--args and --complete are for a URI template (a URI holding \"{\")")
	}
	one := entries.One{IO: opts.IO, App: opts.App, Clock: opts.Clock, JSON: opts.JSON, Server: opts.Server, Timeouts: opts.Timeouts}
	f, err := one.Connect(ctx)
	if err != nil {
		return err
	}
	defer f.Close()
	if opts.Complete != "" {
		return one.Complete(ctx, f, ports.CompletionRef{Type: ports.CompletionRefResource, Name: opts.URI}, opts.Complete, vars)
	}
	var res ports.ReadResult
	if template {
		res, err = f.ReadTemplate(ctx, opts.Server, opts.URI, vars)
	} else {
		res, err = f.ReadResource(ctx, opts.Server, opts.URI)
	}
	if ctx.Err() != nil {
		return cmdutil.ErrCancelled
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		_ = jsonout.Write(opts.IO.Out, entries.ToReadResult(opts.Server, opts.URI, res))
		return nil
	}
	entries.WriteReadResult(opts.IO.Out, res)
	if res.Truncated {
		fmt.Fprintln(opts.IO.ErrOut, "mcpward: the contents were cut to the read cap")
	}
	return nil
}
