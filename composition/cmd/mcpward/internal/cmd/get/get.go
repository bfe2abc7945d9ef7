// Package get is "mcpward get NAME": "mcpward show NAME", or with --scope
// the entry one scope's file holds.
package get

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/show"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/editing"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
)

// Options are get's inputs.
type Options struct {
	IO      *iostreams.IOStreams
	App     func() (*app.App, error)
	JSON    bool
	Globals app.Options
	Env     app.Env
	// Scope is --scope; "" (not given) means show's answer.
	Scope editing.Scope
	// Name is the server.
	Name string
}

// NewCmdGet returns the get command; runF, when not nil, replaces Run.
func NewCmdGet(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.App, Env: f.Env}
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "One server, as show gives it, or as one scope's file defines it",
		Long: `Without --scope, get is "mcpward show NAME" (the same output, --json and
exit codes): the server as the whole configuration resolves it.

With --scope local|project|user, it shows the entry that scope's file
holds, redacted, even when another file's entry takes precedence, and
then how the whole configuration resolves NAME.

With --json and --scope: {"action": "found", "name", "scope", "file",
"entry" (the redacted entry; null when it is malformed), "problem" (why
it is malformed: the decoder's word and field), "server"}.

Exit code 1 when NAME is not defined (with --scope: not in that scope's
file; the message names the scope that defines it, if one does).`,
		Example: `  $ mcpward get weather
  $ mcpward get --scope project weather --json`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON, opts.Globals, opts.Name = f.Globals.JSON, f.Globals.Options, args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().VarP(editing.ScopeValue{S: &opts.Scope}, "scope", "s", "`SCOPE` whose file to read: local, project or user (default: as show)")
	return cmd
}

// Run shows the server.
func Run(ctx context.Context, o *Options) error {
	if o.Scope == "" {
		return show.Run(ctx, &show.Options{IO: o.IO, App: o.App, JSON: o.JSON, Name: o.Name})
	}
	t := editing.Target{IO: o.IO, App: o.App, JSON: o.JSON, Options: o.Globals, Env: o.Env, Scope: o.Scope}
	return editing.Get(ctx, t, o.Name)
}
