// Package approve is "mcpward approve NAME": approve a local, project or
// plugin server, bound to its exact definition, source and workspace.
package approve

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/jsonout"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
	"github.com/mcpward/mcpward/ports"
)

// Options are approve's inputs.
type Options struct {
	IO   *iostreams.IOStreams
	App  func() (*app.App, error)
	JSON bool
	// Name is the server to approve.
	Name string
}

// Approval is the JSON shape of a granted approval.
type Approval struct {
	Identity  ports.Identity `json:"identity"`
	GrantedBy string         `json:"grantedBy"`
}

// JSON is approve --json's output.
type JSON struct {
	Approval Approval    `json:"approval"`
	Server   view.Server `json:"server"`
}

// NewCmdApprove returns the approve command; runF, when not nil, replaces
// Run.
func NewCmdApprove(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.App}
	return &cobra.Command{
		Use:   "approve NAME",
		Short: "Approve a local, project or plugin server for this workspace",
		Long: `Approve the server NAME, defined in a local, project or plugin file. Managed
and user servers are used on your own trust and need no approval.

The approval is bound to the server's name, source file, fingerprint,
endpoint, repository and workspace generation: any change to one of them
needs a new approval. It is recorded, with an audit record, in the state
directory.

With --json: {"approval": {"identity", "grantedBy"}, "server"} (a server
object, see "mcpward help list").`,
		Example: `  $ mcpward show weather      # review it first
  $ mcpward approve weather`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON, opts.Name = f.Globals.JSON, args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
}

// Run approves opts.Name.
func Run(ctx context.Context, opts *Options) error {
	a, err := opts.App()
	if err != nil {
		return err
	}
	srcs := a.LibrarySources()
	ap, err := a.Host.Approve(ctx, srcs, opts.Name)
	if err != nil {
		return err
	}
	r, _ := a.Host.Evaluate(ctx, srcs).Server(opts.Name)
	if opts.JSON {
		_ = jsonout.Write(opts.IO.Out, JSON{
			Approval: Approval{Identity: ap.Identity, GrantedBy: ap.GrantedBy},
			Server:   view.ToServer(r),
		})
		return nil
	}
	Write(opts.IO.Out, ap, r)
	return nil
}

// Write writes approve's text.
func Write(w io.Writer, ap ports.Approval, r composition.Result) {
	id := ap.Identity
	fmt.Fprintf(w, "approved %s (%s %s)\n", termsafe.Line(id.ServerID), id.Tier, termsafe.Line(id.Origin))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  fingerprint\t%s\n", termsafe.Line(id.Fingerprint))
	fmt.Fprintf(tw, "  endpoint\t%s\n", termsafe.Line(id.Security))
	fmt.Fprintf(tw, "  repository\t%s\n", termsafe.Line(id.Repository))
	_ = tw.Flush()
	name := termsafe.Line(r.Name)
	if r.Usable() {
		fmt.Fprintf(w, "%s is now allowed (%s)\n", name, termsafe.Line(r.Reason))
		return
	}
	why, fix := view.Explain(r)
	fmt.Fprintf(w, "%s is still %s (%s): %s\n", name, r.State, termsafe.Line(r.Reason), termsafe.Line(why))
	if fix != "" {
		fmt.Fprintf(w, "  fix: %s\n", termsafe.Line(fix))
	}
}
