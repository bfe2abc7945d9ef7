// Package prompts is "mcpward prompts [NAME...]": connect to the usable
// servers (or those named) and print their prompts.
package prompts

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/clock"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/entries"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/fleet"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/jsonout"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/progress"
)

// Options are prompts' inputs.
type Options struct {
	IO    *iostreams.IOStreams
	App   func() (*app.App, error)
	Clock clock.Clock
	JSON  bool
	// Names are the servers to connect; none means every usable one.
	Names []string
	// ConnectTimeout is --connect-timeout (0: no limit).
	ConnectTimeout time.Duration
}

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
	a, err := opts.App()
	if err != nil {
		return err
	}
	rep := progress.New(progress.Options{
		Out: opts.IO.ErrOut, Clock: opts.Clock, Live: opts.IO.CanRedraw(), Width: opts.IO.TerminalWidth(),
		ConnectTimeout: opts.ConnectTimeout,
	})
	rep.Start()
	f := fleet.Connect(ctx, a, opts.Names, fleet.SupervisorOptions(fleet.Timeouts{Connect: opts.ConnectTimeout}), rep)
	defer f.Close()
	if ctx.Err() != nil {
		rep.Finish(nil)
		return cmdutil.ErrCancelled
	}
	rs := f.Servers()
	rep.Finish(rs)
	failed := false
	out := make([]entries.ServerPrompts, 0, len(rs))
	for i, r := range rs {
		failed = failed || entries.Failed(r, len(opts.Names) > 0)
		cat, _ := f.ServerCatalog(r.Name)
		if opts.JSON {
			out = append(out, entries.ToServerPrompts(r, cat))
			continue
		}
		if i > 0 {
			fmt.Fprintln(opts.IO.Out)
		}
		entries.WritePrompts(opts.IO.Out, r, cat)
	}
	if opts.JSON {
		_ = jsonout.Write(opts.IO.Out, out)
	} else if len(rs) == 0 {
		fmt.Fprintln(opts.IO.Out, "No MCP servers are defined. Run \"mcpward doctor\" to see which files were read.")
	}
	if failed {
		return cmdutil.ErrSilent
	}
	return nil
}
