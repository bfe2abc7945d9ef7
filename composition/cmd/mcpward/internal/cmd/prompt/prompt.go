// Package prompt is "mcpward prompt SERVER PROMPT": connect one server and
// get one of its prompts.
package prompt

import (
	"context"
	"fmt"

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

// Options are prompt's inputs.
type Options struct {
	IO    *iostreams.IOStreams
	App   func() (*app.App, error)
	Clock clock.Clock
	JSON  bool
	// Server and Prompt name the prompt (its name on the server).
	Server, Prompt string
	// Args is --args: a JSON object of string values ("" means none).
	Args string
	// Timeouts are --connect-timeout and --call-timeout (0: no limit).
	Timeouts fleet.Timeouts
	// Complete is --complete: the argument whose completions to print
	// instead ("" means none).
	Complete string
}

// NewCmdPrompt returns the prompt command; runF, when not nil, replaces
// Run.
func NewCmdPrompt(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.App, Clock: f.Clock,
		Timeouts: fleet.Timeouts{Connect: fleet.DefaultConnectTimeout, Call: fleet.DefaultCallTimeout}}
	cmd := &cobra.Command{
		Use:   "prompt SERVER PROMPT [--args JSON]",
		Short: "Get SERVER's prompt PROMPT with its arguments",
		Long: `Connect the server SERVER (and no other), then get its prompt PROMPT (its own
name on the server, as "mcpward prompts" shows it after the slash) with the
arguments --args, a JSON object of string values. The arguments are checked
against those the prompt declares before anything is sent: an argument it
does not declare is refused (unknown_argument), and so is a required one that
is missing (missing_argument).

Each message is printed as its role in brackets ("[user]") followed by its
text; any other content is shown as a placeholder ([image content]). Every
character that could drive your terminal is shown escaped, and every line
after the first is indented by two spaces. The messages are cut to the
admission cap; a note on stderr says so. Use --json for the exact content.

With --complete ARG, nothing is got: the server's completions of the
argument ARG are printed one per line instead, for the value --args gives ARG
so far ("" when none), with the other arguments of --args as context.

With --json: {"server", "prompt", "description", "truncated", "messages"
[{"role", "content" (one MCP content block)}]}; with --complete, {"server",
"argument", "values", "total", "has_more"}.

Exit code 1 when the server cannot be connected or the prompt cannot be got.`,
		Example: `  $ mcpward prompt everything args-prompt --args '{"city":"Oslo"}'
  $ mcpward prompt everything simple-prompt --json
  $ mcpward prompt everything completable-prompt --complete name --args '{"department":"Sales"}'`,
		Args: cmdutil.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.Globals.JSON
			opts.Server, opts.Prompt = args[0], args[1]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Args, "args", "", "the prompt's arguments, a `JSON` object of strings")
	cmd.Flags().StringVar(&opts.Complete, "complete", "", "print the server's completions of this `NAME` (argument; its value so far and the others come from --args) instead")
	cmd.Flags().Var(cmdutil.DurationValue{D: &opts.Timeouts.Connect}, "connect-timeout",
		"how long one attempt to connect the server may take (0: no limit)")
	cmd.Flags().Var(cmdutil.DurationValue{D: &opts.Timeouts.Call}, "call-timeout",
		"how long getting the prompt may take (0: no limit)")
	return cmd
}

// Run connects opts.Server and gets its prompt opts.Prompt.
func Run(ctx context.Context, opts *Options) error {
	args, err := entries.ParseArgs(opts.Args)
	if err != nil {
		return err
	}
	one := entries.One{IO: opts.IO, App: opts.App, Clock: opts.Clock, JSON: opts.JSON, Server: opts.Server, Timeouts: opts.Timeouts}
	f, err := one.Connect(ctx)
	if err != nil {
		return err
	}
	defer f.Close()
	if opts.Complete != "" {
		return one.Complete(ctx, f, ports.CompletionRef{Type: ports.CompletionRefPrompt, Name: opts.Prompt}, opts.Complete, args)
	}
	res, err := f.GetPrompt(ctx, opts.Server, opts.Prompt, args)
	if ctx.Err() != nil {
		return cmdutil.ErrCancelled
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		_ = jsonout.Write(opts.IO.Out, entries.ToPromptResult(opts.Server, opts.Prompt, res))
		return nil
	}
	entries.WritePromptResult(opts.IO.Out, res)
	if res.Truncated {
		fmt.Fprintln(opts.IO.ErrOut, "mcpward: the messages were cut to the admission cap")
	}
	return nil
}
