// Package resources is "mcpward resources [NAME...]": connect to the usable
// servers (or those named) and print their resources and templates.
package resources

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/entries"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/fleet"
)

// Options are resources' inputs.
type Options = entries.ListOptions

// NewCmdResources returns the resources command; runF, when not nil, replaces
// Run.
func NewCmdResources(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.App, Clock: f.Clock, ConnectTimeout: fleet.DefaultConnectTimeout}
	cmd := &cobra.Command{
		Use:   "resources [NAME...]",
		Short: "Connect to the usable servers (or those named) and print their resources",
		Long: `Connect to every usable server, or to the servers named, and print each one's
state, resources and resource templates: each resource's URI, MIME type and
name (or the first line of its description), then each template ("template
URI-TEMPLATE") the same way. "mcpward read SERVER URI" reads one. Entries that
were not admitted are listed as rejected with the reason (for example
invalid_template, duplicate_name). Every text a server sent is shown with its
control characters escaped.

With --json: an array of {"name", "state", "class", "reason", "resources"
[{"name" (host-facing), "uri", "resource_name", "title", "description",
"mime_type", "size"}], "templates" [{"name" (host-facing), "uri_template",
"template_name", "title", "description", "mime_type", "variables"}],
"rejected" [{"server", "kind", "name", "reason"}]}.

Exit code 1 when a server failed to connect, or a server named is not
connected.`,
		Example: `  $ mcpward resources
  $ mcpward resources everything --json`,
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

// Run connects and prints the resources and templates.
func Run(ctx context.Context, opts *Options) error {
	return entries.List(ctx, opts, entries.ToServerResources, entries.WriteResources)
}
