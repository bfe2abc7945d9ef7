// Package remove is "mcpward remove NAME": delete a server from the
// local, project or user file.
package remove

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/editing"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/core/refusal"
)

// Options are remove's inputs.
type Options struct {
	IO      *iostreams.IOStreams
	App     func() (*app.App, error)
	JSON    bool
	Globals app.Options
	Env     app.Env
	// Scope is --scope (default: the one scope whose file defines Name,
	// else local).
	Scope editing.Scope
	// ScopeSet reports that --scope was given.
	ScopeSet bool
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
		Long: `Delete the server NAME from the file of one scope: the one scope whose
file defines NAME when --scope is not given (when two scopes' files do,
name one with --scope; see "mcpward help add" for the scopes). The file is rewritten as add does: atomically, every
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
			opts.ScopeSet = cmd.Flags().Changed("scope")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().VarP(editing.ScopeValue{S: &opts.Scope}, "scope", "s", "`SCOPE` whose file to edit: local, project or user")
	return cmd
}

// ReasonAmbiguousScope: remove without --scope of a name more than one
// scope's file defines.
const ReasonAmbiguousScope = "scope_ambiguous"

// Run removes the entry (see editing.Remove). Without --scope it finds
// the scope: the one whose file defines the name; several are refused,
// naming them; none leaves the local scope's refusal (which names where
// the name is defined, if anywhere).
func Run(ctx context.Context, o *Options) error {
	if !o.ScopeSet {
		found := editing.Locate(o.Globals, o.Env, o.Name)
		var in []string
		for _, s := range editing.Scopes {
			if _, ok := found[s]; ok {
				in = append(in, string(s))
			}
		}
		switch len(in) {
		case 0:
		case 1:
			o.Scope = editing.Scope(in[0])
		default:
			return &refusal.Error{Class: refusal.Config, Reason: ReasonAmbiguousScope, Server: o.Name,
				Detail: "the " + strings.Join(in, " and ") + " scopes define it: name one with --scope"}
		}
	}
	t := editing.Target{IO: o.IO, App: o.App, JSON: o.JSON, Options: o.Globals, Env: o.Env, Scope: o.Scope}
	return editing.Remove(ctx, t, o.Name)
}
