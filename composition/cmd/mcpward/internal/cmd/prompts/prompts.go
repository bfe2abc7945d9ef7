// Package prompts is "mcpward prompts [NAME...]": connect to the usable
// servers (or those named) and print their prompts.
package prompts

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/entries"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/fleet"
)

// Options are prompts' inputs.
type Options = entries.ListOptions

// NewCmdPrompts returns the prompts command; runF, when not nil, replaces
// Run.
func NewCmdPrompts(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.App, Clock: f.Clock, ConnectTimeout: fleet.DefaultConnectTimeout}
	cmd := &cobra.Command{
		Use:   "prompts [NAME...]",
		Short: "Connect to the usable servers (or those named) and print their prompts",
		Long: `Connect to every usable server, or to the servers named, and print each one's
state and prompts: each prompt's host-facing name (mcp__SERVER__PROMPT), then
SERVER/PROMPT (its own name on the server), then the first line of its
description, and under it each argument the prompt declares ("(required)"
when it must be given). "mcpward prompt SERVER PROMPT" gets one. Prompts
that were not admitted are listed as rejected with the reason (for example
too_many_arguments, duplicate_name, name_collision). Every text a server
sent is shown with its control characters escaped.

With --json: an array of {"name", "state", "class", "reason", "prompts"
[{"name" (host-facing), "server_prompt", "title", "description",
"arguments" [{"name", "title", "description", "required"}]}], "rejected"
[{"server", "kind", "name", "reason"}]}.

Exit code 1 when a server failed to connect, or a server named is not
connected.`,
		Example: `  $ mcpward prompts
  $ mcpward prompts everything --json`,
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
	return cmd
}

// Run connects and prints the prompts.
func Run(ctx context.Context, opts *Options) error {
	return entries.List(ctx, opts, entries.ToServerPrompts, entries.WritePrompts)
}
