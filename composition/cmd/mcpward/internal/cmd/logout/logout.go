// Package logout is "mcpward logout NAME": delete an OAuth server's
// sign-in and ask its issuer to revoke it.
package logout

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/login"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
)

// Options are logout's inputs.
type Options struct {
	IO   *iostreams.IOStreams
	App  func() (*app.App, error)
	JSON bool
	// Name is the server to sign out of.
	Name string
}

// NewCmdLogout returns the logout command; runF, when not nil, replaces
// Run.
func NewCmdLogout(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.App}
	return &cobra.Command{
		Use:   "logout NAME",
		Short: "Delete NAME's sign-in, then ask its issuer to revoke it",
		Long: `Delete the stored sign-in of the OAuth server NAME, then ask its issuer to
revoke the tokens. Signing out of a server nobody signed in to succeeds.

With --json: {"name", "state": "signed_out"}.`,
		Example: `  $ mcpward logout notes`,
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

// Run signs out of opts.Name.
func Run(ctx context.Context, opts *Options) error {
	a, err := opts.App()
	if err != nil {
		return err
	}
	if err := a.Host.SignOut(ctx, a.LibrarySources(), opts.Name); err != nil {
		return err
	}
	return login.Done(opts.IO, opts.JSON, opts.Name, oauth.SignedOut, "signed out of "+opts.Name)
}
