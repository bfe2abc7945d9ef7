// Package revoke is "mcpward revoke NAME": remove every approval recorded
// for a server name.
package revoke

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/jsonout"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
)

// Options are revoke's inputs.
type Options struct {
	IO   *iostreams.IOStreams
	App  func() (*app.App, error)
	JSON bool
	// Name is the server whose approvals are removed.
	Name string
}

// JSON is revoke --json's output.
type JSON struct {
	Name    string `json:"name"`
	Revoked int    `json:"revoked"`
}

// NewCmdRevoke returns the revoke command; runF, when not nil, replaces
// Run.
func NewCmdRevoke(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.App}
	return &cobra.Command{
		Use:   "revoke NAME",
		Short: "Remove every approval recorded for NAME",
		Long: `Remove every approval recorded for the server name NAME, in every workspace,
with an audit record of each.

With --json: {"name", "revoked" (how many approvals were removed)}.

Revoking a name with no approval recorded succeeds (exit code 0) and
says so: "revoked" is then 0.`,
		Example: `  $ mcpward revoke weather`,
		Args:    cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON, opts.Name = f.Globals.JSON, args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
}

// Run revokes every approval of opts.Name.
func Run(ctx context.Context, opts *Options) error {
	a, err := opts.App()
	if err != nil {
		return err
	}
	n, err := a.Host.RevokeAll(ctx, opts.Name)
	if err != nil {
		return err
	}
	if opts.JSON {
		_ = jsonout.Write(opts.IO.Out, JSON{Name: opts.Name, Revoked: n})
		return nil
	}
	if n == 0 {
		fmt.Fprintf(opts.IO.Out, "nothing to revoke: no approval is recorded for %s\n", termsafe.Line(opts.Name))
		return nil
	}
	fmt.Fprintf(opts.IO.Out, "revoked %d approval%s of %s\n", n, view.Plural(n), termsafe.Line(opts.Name))
	return nil
}
