// Package addjson is "mcpward add-json NAME JSON": define a server from
// one entry's JSON, as "claude mcp add-json" does.
package addjson

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/editing"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
)

// Options are add-json's inputs.
type Options struct {
	IO      *iostreams.IOStreams
	App     func() (*app.App, error)
	JSON    bool
	Globals app.Options
	Env     app.Env
	// Scope is --scope (default local).
	Scope editing.Scope
	// Name is the server name, Entry its JSON.
	Name  string
	Entry string
	// AllowLiteralSecret is --allow-literal-secret.
	AllowLiteralSecret bool
}

// NewCmdAddJSON returns the add-json command; runF, when not nil,
// replaces Run.
func NewCmdAddJSON(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.App, Env: f.Env, Scope: editing.ScopeLocal}
	cmd := &cobra.Command{
		Use:   "add-json NAME JSON",
		Short: "Define a server from one entry's JSON",
		Long: `Define the server NAME from JSON, one entry as it stands under mcpServers, in
the file of one scope (local by default, see "mcpward help add").

The entry is decoded exactly as mcpward reads its files: "type" (stdio or
http; inferred from "command" or "url"); for stdio "command", "args",
"env", "cwd"; for http "url", "headers", "headersHelper" (an argv) and
"oauth" ("clientId", "scopes", "callbackPort", "authServerMetadataUrl");
for both "requiresTrustedWorkspace". An unknown key (such as "disabled" or
"autoApprove"), a key twice, or an entry mcpward would refuse (sse, ws, a
clientSecret, a headersHelper string) is refused, naming the field. Its
keys are written in the order given.

The file is rewritten as add does, and literal credentials are refused
the same way (--allow-literal-secret keeps them, with a warning for the
project file, which is shared).

With --json: the output of "mcpward add --json".`,
		Example: `  $ mcpward add-json weather '{"command":"npx","args":["-y","weather-mcp"],"env":{"WEATHER_API_KEY":"${WEATHER_API_KEY}"}}'
  $ mcpward add-json --scope user notes '{"type":"http","url":"https://notes.example.com/mcp"}'`,
		Args: cmdutil.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON, opts.Globals = f.Globals.JSON, f.Globals.Options
			opts.Name, opts.Entry = args[0], args[1]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.VarP(editing.ScopeValue{S: &opts.Scope}, "scope", "s", "`SCOPE` whose file to write: local, project or user")
	fl.BoolVar(&opts.AllowLiteralSecret, "allow-literal-secret", false, "keep a literal credential in the file (in the project file too, which is committed: a warning says so)")
	return cmd
}

// Run writes the entry (see editing.Add). JSON that is not one object is
// a usage error; its text is never echoed.
func Run(ctx context.Context, o *Options) error {
	entry, err := editing.Parse([]byte(o.Entry))
	if err != nil || !entry.IsObject() {
		return cmdutil.FlagErrorf("add-json takes one JSON object, the entry (with each key once)")
	}
	t := editing.Target{IO: o.IO, App: o.App, JSON: o.JSON, Options: o.Globals, Env: o.Env, Scope: o.Scope}
	return editing.Add(ctx, t, o.Name, entry, o.AllowLiteralSecret)
}
