// Package add is "mcpward add": define a stdio or HTTP server in the
// local, project or user file, as "claude mcp add" does.
package add

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/editing"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
)

// Options are add's inputs.
type Options struct {
	IO      *iostreams.IOStreams
	App     func() (*app.App, error)
	JSON    bool
	Globals app.Options
	Env     app.Env
	// Scope is --scope (default local).
	Scope editing.Scope
	// Transport is --transport: "stdio" (default) or "http".
	Transport string
	// Name is the server name; Command and Args the stdio command line,
	// or URL the HTTP endpoint.
	Name    string
	Command string
	Args    []string
	URL     string
	// Env are the -e KEY=VALUE pairs, Headers the -H "Name: value" ones,
	// in the order given.
	EnvPairs [][2]string
	Headers  [][2]string
	// Cwd is --cwd.
	Cwd string
	// AllowLiteralSecret is --allow-literal-secret.
	AllowLiteralSecret bool
}

// NewCmdAdd returns the add command; runF, when not nil, replaces Run.
func NewCmdAdd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.App, Env: f.Env, Scope: editing.ScopeLocal, Transport: "stdio"}
	var envs, headers []string
	cmd := &cobra.Command{
		Use:   "add NAME -- COMMAND [ARGS...]",
		Short: "Define a server in the local, project or user file",
		Long: `Define the stdio server NAME (add NAME -- COMMAND [ARGS...]) or the HTTP
server NAME (add --transport http NAME URL) in the file of one scope, as
"claude mcp add" does:

  local    yours, for this workspace (the default), kept outside the working
           tree: $XDG_CONFIG_HOME/mcpward/workspaces/NAME-HASH/local.json
           (else under $HOME/.config/mcpward/), one per workspace root
  project  the workspace's .mcp.json (the nearest one from ./ up to the
           workspace root, else the root's), shared with everyone who
           clones the project
  user     $XDG_CONFIG_HOME/mcpward/mcp.json (else $HOME/.config/mcpward/mcp.json),
           yours, for every workspace

The workspace root is the git root, else the nearest directory holding
.mcp.json, else ./; "mcpward doctor" shows every file. (--local, --project
and --user name other files.) mcpward never writes
another host's file, even when a flag names it: ~/.claude.json,
claude_desktop_config.json, .cursor/mcp.json, .vscode/mcp.json,
.gemini/settings.json and .codex/config.toml are refused by name.

A stdio server is its command line after "--" (needed when an argument
starts with "-"), with -e KEY=VALUE for its environment and --cwd for its
directory. An HTTP server is --transport http, its URL, and -H "Name:
value" for its headers.

The file is rewritten atomically (a temporary file, synced, renamed over
it), keeping every other key in its order (indented by two spaces) and
the file's mode; a new file is created 0600 (local, user) or 0644
(project). The entry must decode as a usable definition, and a name the
scope already defines is refused ("mcpward remove" it first).

A literal credential is refused, with the ${VAR} reference to write
instead: an env value under a credential-shaped key (API_KEY, TOKEN, ...),
a header value under a credential-shaped header (Authorization, X-Api-Key,
...), an argument after a credential-shaped flag (--api-key VALUE), and
any value shaped like a credential (--token=VALUE, ?token=, a URL
password, a known token prefix). --allow-literal-secret keeps it anyway in
the private local or user file; in the shared project file too, with a
warning that the next commit gives it to everyone who clones the project.

The entry is then shown redacted (env and header keys only, never their
values), with how the whole configuration now resolves NAME.

With --json: {"action": "added", "name", "scope", "file", "entry" (the
redacted entry as written), "server" (see "mcpward help list"; null when
the configuration cannot be evaluated), "literalSecrets" (where, when
kept with --allow-literal-secret)}.

Exit code 1 when the entry is refused or the file cannot be written (it
is then unchanged).`,
		Example: `  $ mcpward add weather -e 'WEATHER_API_KEY=${WEATHER_API_KEY}' -- npx -y weather-mcp
  $ mcpward add --scope project files -- files-mcp --read-only
  $ mcpward add --transport http -H 'Authorization: Bearer ${NOTES_TOKEN}' notes https://notes.example.com/mcp`,
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.Transport == "http" {
				return cmdutil.ExactArgs(2)(cmd, args)
			}
			return cmdutil.MinimumArgs(2)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON, opts.Globals = f.Globals.JSON, f.Globals.Options
			opts.Name = args[0]
			if err := opts.parse(cmd, args[1:], envs, headers); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.VarP(editing.ScopeValue{S: &opts.Scope}, "scope", "s", "`SCOPE` whose file to write: local, project or user")
	fl.StringVarP(&opts.Transport, "transport", "t", "stdio", "`KIND` of server: stdio or http")
	fl.StringArrayVarP(&envs, "env", "e", nil, "`KEY=VALUE` in the server's environment (stdio); repeatable")
	fl.StringVar(&opts.Cwd, "cwd", "", "`DIR` the server runs in (stdio)")
	fl.StringArrayVarP(&headers, "header", "H", nil, "`\"Name: value\"` header sent to the server (http); repeatable")
	fl.BoolVar(&opts.AllowLiteralSecret, "allow-literal-secret", false, "keep a literal credential in the file (in the project file too, which is committed: a warning says so)")
	return cmd
}

// parse checks the flags together and splits the pairs. Its errors never
// hold a value given.
func (o *Options) parse(cmd *cobra.Command, rest, envs, headers []string) error {
	switch o.Transport {
	case "stdio":
		if len(headers) > 0 {
			return cmdutil.FlagErrorf("-H is for --transport http; a stdio server takes -e KEY=VALUE")
		}
		o.Command, o.Args = rest[0], rest[1:]
	case "http":
		if len(envs) > 0 || cmd.Flags().Changed("cwd") {
			return cmdutil.FlagErrorf("-e and --cwd are for stdio servers; an http server takes -H \"Name: value\"")
		}
		o.URL = rest[0]
	case "sse", "ws":
		return cmdutil.FlagErrorf("--transport %s is refused by mcpward (deprecated or non-standard); use http (streamable HTTP)", o.Transport)
	default:
		return cmdutil.FlagErrorf("unknown --transport (want stdio or http)")
	}
	for i, kv := range envs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return cmdutil.FlagErrorf("-e takes KEY=VALUE (value %d has no KEY=)", i+1)
		}
		o.EnvPairs = append(o.EnvPairs, [2]string{k, v})
	}
	for i, h := range headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return cmdutil.FlagErrorf("-H takes \"Name: value\" (value %d has no \"Name:\")", i+1)
		}
		o.Headers = append(o.Headers, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return nil
}

// Entry is the JSON entry of o, in the order "claude mcp add" writes it.
func (o *Options) Entry() *editing.Node {
	e := editing.Object()
	if o.Transport == "http" {
		e.Set("type", editing.String("http"))
		e.Set("url", editing.String(o.URL))
		if len(o.Headers) > 0 {
			h := editing.Object()
			for _, kv := range o.Headers {
				h.Set(kv[0], editing.String(kv[1]))
			}
			e.Set("headers", h)
		}
		return e
	}
	e.Set("type", editing.String("stdio"))
	e.Set("command", editing.String(o.Command))
	e.Set("args", editing.Strings(o.Args))
	if len(o.EnvPairs) > 0 {
		env := editing.Object()
		for _, kv := range o.EnvPairs {
			env.Set(kv[0], editing.String(kv[1]))
		}
		e.Set("env", env)
	}
	if o.Cwd != "" {
		e.Set("cwd", editing.String(o.Cwd))
	}
	return e
}

// Run writes the entry (see editing.Add).
func Run(ctx context.Context, o *Options) error {
	t := editing.Target{IO: o.IO, App: o.App, JSON: o.JSON, Options: o.Globals, Env: o.Env, Scope: o.Scope}
	return editing.Add(ctx, t, o.Name, o.Entry(), o.AllowLiteralSecret)
}
