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
	"github.com/mcpward/mcpward/core/refusal"
)

// ReasonApprovalNotFound is the reason of revoking a name without any
// approval. Class Config.
const ReasonApprovalNotFound = "approval_not_found"

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

Exit code 1 when no approval is recorded for NAME.`,
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
	if n == 0 {
		return &refusal.Error{Class: refusal.Config, Reason: ReasonApprovalNotFound, Server: opts.Name, Detail: "no approval is recorded for this name"}
	}
	if opts.JSON {
		_ = jsonout.Write(opts.IO.Out, JSON{Name: opts.Name, Revoked: n})
		return nil
	}
	fmt.Fprintf(opts.IO.Out, "revoked %d approval%s of %s\n", n, view.Plural(n), termsafe.Line(opts.Name))
	return nil
}
