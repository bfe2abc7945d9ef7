// Package remove is "mcpward remove NAME": delete a server from the
// local, project or user file.
package remove

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/editing"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
)

// Options are remove's inputs.
type Options struct {
	IO      *iostreams.IOStreams
	App     func() (*app.App, error)
	JSON    bool
	Globals app.Options
	Env     app.Env
	// Scope is --scope (default local).
	Scope editing.Scope
	// Name is the server to remove.
	Name string
}

// NewCmdRemove returns the remove command; runF, when not nil, replaces
// Run.
func NewCmdRemove(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.App, Env: f.Env, Scope: editing.ScopeLocal}
	cmd := &cobra.Command{
		Use:   "remove NAME",
		Short: "Delete a server from the local, project or user file",
		Long: `Delete the server NAME from the file of one scope (local by default, see
"mcpward help add"). The file is rewritten as add does: atomically, every
other key kept in its order, its mode kept. A disabledMcpServers list that
names NAME is left as it is. Approvals are not touched ("mcpward revoke
NAME" removes them).

It prints the entry removed (redacted) and, when another file still
defines NAME, how the configuration now resolves it.

With --json: {"action": "removed", "name", "scope", "file", "entry" (the
redacted entry removed; null when it was malformed), "server" (null when no
file defines NAME any more)}.

Exit code 1 when the scope's file does not define NAME (the message names
the scope that does, if one does) or cannot be written.`,
		Example: `  $ mcpward remove weather
  $ mcpward remove --scope project files`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON, opts.Globals, opts.Name = f.Globals.JSON, f.Globals.Options, args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().VarP(editing.ScopeValue{S: &opts.Scope}, "scope", "s", "`SCOPE` whose file to edit: local, project or user")
	return cmd
}

// Run removes the entry (see editing.Remove).
func Run(ctx context.Context, o *Options) error {
	t := editing.Target{IO: o.IO, App: o.App, JSON: o.JSON, Options: o.Globals, Env: o.Env, Scope: o.Scope}
	return editing.Remove(ctx, t, o.Name)
}
