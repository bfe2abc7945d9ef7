// Command mcpward shows, approves, revokes, connects and calls the MCP servers a person's
// configuration files define, and explains why each one is or is not
// usable. Run "mcpward -h" for the usage text (usageText below), which
// documents the commands, flags, file locations, state directory, JSON
// shapes and exit codes.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/mcpward/mcpward/core/refusal"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

const usageText = `mcpward shows the MCP servers your configuration defines, which of them may be
used, and connects to them.

Usage:
  mcpward [flags] list            every server: state, tier, transport, fingerprint, reason
  mcpward [flags] show NAME       one server: redacted definition, fingerprint, source, and
                                  exactly why it is or is not usable
  mcpward [flags] approve NAME    approve a local, project or plugin server, bound to its
                                  exact definition, source and workspace
  mcpward [flags] revoke NAME     remove every approval recorded for NAME
  mcpward [flags] tools [NAME...] connect to the usable servers (or those named) and
                                  print their tools; progress on stderr
  mcpward [flags] call SERVER TOOL [--args JSON]
                                  call SERVER's tool TOOL (its name on the server) with
                                  the arguments object JSON (default {})
  mcpward [flags] login NAME      sign in to the OAuth server NAME: prints the URL to
                                  open in your browser, then waits for its redirect
                                  (or for the redirect's address pasted on stdin)
  mcpward [flags] logout NAME     delete NAME's sign-in, then ask its issuer to revoke it
  mcpward [flags] doctor          every problem found, each with its fix
  mcpward demo [--server PATH]    a guided run on a throwaway demo configuration; with
                                  PATH (the built example server of examples/server)
                                  it also approves, lists and calls a real server

Flags (before or after the command):
  --managed FILE      managed (administrator) configuration; repeatable
                      (default /etc/mcpward/managed-mcp.json)
  --local FILE        your private configuration for this workspace
                      (default ./.mcpward/local.json)
  --project FILE      the workspace's shared configuration (default ./.mcp.json)
  --user FILE         your configuration for every workspace
                      (default $XDG_CONFIG_HOME/mcpward/mcp.json, else
                      $HOME/.config/mcpward/mcp.json)
  --plugin FILE       a plugin's configuration; repeatable (no default)
  --state-dir DIR     approvals, audit log, locks and file tokens
                      (default $XDG_STATE_HOME/mcpward, else
                      $HOME/.local/state/mcpward)
  --profile NAME      headless (default): everything on files under --state-dir;
                      desktop: sign-in tokens in the OS keychain, the rest on files
  --trust-workspace   trust this workspace (servers with
                      "requiresTrustedWorkspace": true need it)
  --allow-header-helper JSON
                      let a definition's headersHelper run when it is exactly this
                      argv, a JSON array such as '["/usr/bin/token","--for","api"]';
                      repeatable (default: none runs)
  --json              machine-readable output (shapes below)

Files: ./ is the working directory. A file at a default location that does not
exist is simply absent; a file named by a flag must be readable. Each file is
{"mcpServers": {NAME: {...}}, "disabledMcpServers": [NAME, ...]}. A name
resolves to one whole entry from the highest tier defining it: managed, local,
project, user, plugin. If a managed file cannot be read, every server from a
lower tier is blocked. disabledMcpServers: a managed file may disable any
name, a local or user file any name not won by managed, a project or plugin
file only names won by its own tier.

Activation: managed and user servers are used on your own trust; local,
project and plugin servers need "mcpward approve NAME". An approval is bound to
the server's name, source file, fingerprint, endpoint, repository and workspace
generation: any change needs a new approval. ${VAR} templates are expanded from
mcpward's environment; secrets are never printed.

Connecting (tools, call): only usable servers are connected; a stdio server
runs with the workspace root (the git root, else the working directory) as
its allowed root and gets only HOME, PATH, USER and the like from mcpward's
environment, plus its own env; HTTP servers are reached under the strict
egress policy (https, or http to loopback only).

Workspace: the repository is the "origin" remote (else the first remote) of the
git repository holding the working directory, without credentials or query;
without a remote, file://GIT_ROOT; outside git, file://WORKING_DIRECTORY. The
workspace generation is a random id kept in STATE_DIR/workspaces/; delete that
file to renew the workspace and void every approval made in it.

Signing in (login): for an HTTP server whose definition has "oauth", mcpward
discovers its authorization server from the server's own metadata (and refuses
anything it cannot check: a resource or issuer that does not match, an
endpoint that is not https, no PKCE S256), registers itself when the
definition names no clientId, and catches the browser's redirect on
127.0.0.1. The tokens are kept for that server name and URL together (in the
OS keychain with --profile desktop, else under the state directory) and are
refreshed when they expire; tools and call then use them.

State directory (mode 0700): store/approvals.json, store/audit.jsonl,
store/locks/, store/tokens/ (headless), workspaces/.

JSON (--json): list: an array of server objects; show: one server object;
approve: {"approval": {"identity", "grantedBy"}, "server"}; revoke: {"name",
"revoked"}; login and logout: {"name", "state" (signed_in, signed_out)};
doctor: {"profile", "stateDir", "stores", "sources", "workspace", "findings",
"ok"}; a failure: {"error": {"class", "reason", "server",
"detail"}}; tools: an array of {"name", "state" (connected, failed, unknown or
a state below), "class" and "reason" (of a failure; "" when none),
"partial" ({LIST: reason} of lists cut short), "stale", "tools" [{"name"
(host-facing), "server_tool", "description", "input_schema"}], "rejected"
[{"server", "kind", "name", "reason"}], "diagnostics"}; call: {"server",
"tool", "is_error", "truncated", "content" (the MCP content array)}. A
server object has name, state (allowed, denied, unresolved,
blocked, disabled, refused), usable, reason, tier, origin, transport,
fingerprint, projection (null when malformed), why and fix, and when they
apply missing, mismatch, field, detail, contenders, shadowed, disabledBy,
identity; show adds signIn (signed_in, signed_out, refresh_needed) for a
server with oauth.

Exit codes: 0 ok; 1 failure (and doctor: a problem found; tools: a server
failed to connect, or a server named is not connected; call: the tool
returned an error result); 2 usage.
`

// env is what a run of the CLI sees of its process: its output, its
// environment and its working directory. The demo runs the CLI on a
// throwaway env.
type env struct {
	stdout, stderr io.Writer
	// stdin is where login reads a pasted redirect; nil means none.
	stdin io.Reader
	// lookup reads the environment: ${VAR} values and the XDG locations.
	lookup func(string) (string, bool)
	// cwd is the working directory (absolute).
	cwd string
	// managedPath is the default managed configuration file.
	managedPath string
}

// defaultManagedPath is the default managed configuration file.
const defaultManagedPath = "/etc/mcpward/managed-mcp.json"

func main() {
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpward: the working directory cannot be read")
		os.Exit(exitFailure)
	}
	os.Exit(run(context.Background(), os.Args[1:], env{
		stdout:      os.Stdout,
		stderr:      os.Stderr,
		stdin:       os.Stdin,
		lookup:      os.LookupEnv,
		cwd:         cwd,
		managedPath: defaultManagedPath,
	}))
}

// pathFlag is a flag holding one path that remembers whether it was set.
type pathFlag struct {
	path string
	set  bool
}

func (p *pathFlag) String() string { return p.path }

func (p *pathFlag) Set(s string) error {
	if s == "" {
		return errors.New("empty path")
	}
	p.path, p.set = s, true
	return nil
}

// pathsFlag is a repeatable path flag.
type pathsFlag []string

func (p *pathsFlag) String() string { return strings.Join(*p, ",") }

func (p *pathsFlag) Set(s string) error {
	if s == "" {
		return errors.New("empty path")
	}
	*p = append(*p, s)
	return nil
}

// argvsFlag holds the exact command lines --allow-header-helper allows,
// each given as a JSON array of strings.
type argvsFlag [][]string

// String implements flag.Value: how many command lines are allowed (never
// their text).
func (a *argvsFlag) String() string { return fmt.Sprint(len(*a)) }

// Set implements flag.Value: s is one JSON array of strings, not empty.
func (a *argvsFlag) Set(s string) error {
	var argv []string
	if err := json.Unmarshal([]byte(s), &argv); err != nil || len(argv) == 0 {
		return errors.New("takes a JSON array of strings, the helper's exact argv")
	}
	*a = append(*a, argv)
	return nil
}

// options are the parsed command line.
type options struct {
	managed, plugins     pathsFlag
	local, project, user pathFlag
	stateDir             pathFlag
	profile              string
	trustWorkspace, json bool
	// callArgs is call's --args (the tool's arguments as a JSON object).
	callArgs pathFlag
	command  string
	args     []string
	// demoServer is demo's --server (the example server binary).
	demoServer pathFlag
	// allowHelpers are the headersHelper command lines allowed to run.
	allowHelpers argvsFlag
}

// The deployment profiles.
const (
	profileHeadless = "headless"
	profileDesktop  = "desktop"
)

// commandArgs is how many positional arguments each command takes: at
// least [0], at most [1] (-1: any number).
var commandArgs = map[string][2]int{
	"list": {0, 0}, "show": {1, 1}, "approve": {1, 1}, "revoke": {1, 1}, "doctor": {0, 0}, "demo": {0, 0}, "help": {0, 0},
	"tools": {0, -1}, "call": {2, 2}, "login": {1, 1}, "logout": {1, 1},
}

// parse parses args, accepting flags before and after the command. "--"
// ends the flags.
func parse(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("mcpward", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.Var(&o.managed, "managed", "")
	fs.Var(&o.local, "local", "")
	fs.Var(&o.project, "project", "")
	fs.Var(&o.user, "user", "")
	fs.Var(&o.plugins, "plugin", "")
	fs.Var(&o.stateDir, "state-dir", "")
	fs.StringVar(&o.profile, "profile", profileHeadless, "")
	fs.BoolVar(&o.trustWorkspace, "trust-workspace", false, "")
	fs.BoolVar(&o.json, "json", false, "")
	fs.Var(&o.callArgs, "args", "")
	fs.Var(&o.demoServer, "server", "")
	fs.Var(&o.allowHelpers, "allow-header-helper", "")
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return o, err
		}
		rest := fs.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if len(pos) == 0 {
		return o, errors.New("no command given")
	}
	o.command, o.args = pos[0], pos[1:]
	n, ok := commandArgs[o.command]
	switch {
	case !ok:
		return o, errors.New("unknown command")
	case n[0] == n[1] && len(o.args) != n[0]:
		return o, fmt.Errorf("%s takes %d argument(s), got %d", o.command, n[0], len(o.args))
	case len(o.args) < n[0] || n[1] >= 0 && len(o.args) > n[1]:
		return o, fmt.Errorf("%s takes at least %d argument(s), got %d", o.command, n[0], len(o.args))
	case o.callArgs.set && o.command != "call":
		return o, errors.New("--args is only for call")
	case o.demoServer.set && o.command != "demo":
		return o, errors.New("--server is only for demo")
	case o.profile != profileHeadless && o.profile != profileDesktop:
		return o, errors.New("unknown profile (want headless or desktop)")
	}
	return o, nil
}

// run runs the CLI with args and returns its exit code.
func run(ctx context.Context, args []string, e env) int {
	o, err := parse(args)
	if errors.Is(err, flag.ErrHelp) || err == nil && o.command == "help" {
		fmt.Fprint(e.stdout, usageText)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "mcpward: %s\nRun \"mcpward -h\" for usage.\n", usageMessage(err))
		return exitUsage
	}
	if o.command == "demo" {
		return demo(ctx, e, o.demoServer.path)
	}
	a, code := newApp(ctx, o, e)
	if a == nil {
		return code
	}
	defer a.close()
	switch o.command {
	case "list":
		return a.list(ctx)
	case "show":
		return a.show(ctx, o.args[0])
	case "approve":
		return a.approve(ctx, o.args[0])
	case "revoke":
		return a.revoke(ctx, o.args[0])
	case "tools":
		return a.tools(ctx, o.args)
	case "call":
		return a.call(ctx, o.args[0], o.args[1], o.callArgs.path)
	case "login":
		return a.login(ctx, o.args[0])
	case "logout":
		return a.logout(ctx, o.args[0])
	default:
		return a.doctor(ctx)
	}
}

// usageMessage renders a parse error without echoing a flag's value:
// the flag package quotes the rejected value ("invalid value \"x\" for flag
// -y"), and a value may be a secret typed in the wrong place.
func usageMessage(err error) string {
	return quotedValue.ReplaceAllString(err.Error(), "")
}

// quotedValue matches a quoted value and the space after it in a flag
// package error.
var quotedValue = regexp.MustCompile(`"(?:[^"\\]|\\.)*" ?`)

// fail reports err (text on stderr, or the JSON error object on stdout) and
// returns exitFailure. Only a *refusal.Error's fields are ever printed; any
// other error is reported as an internal failure without its text.
func (a *app) fail(err error) int {
	return failTo(a.env, a.opts.json, err)
}

func failTo(e env, asJSON bool, err error) int {
	var r *refusal.Error
	if !errors.As(err, &r) {
		r = refusal.New(refusal.Internal, "internal", "")
	}
	if asJSON {
		writeJSON(e.stdout, map[string]errorJSON{"error": {
			Class: r.Class.String(), Reason: r.Reason, Server: r.Server, Detail: r.Detail,
		}})
		return exitFailure
	}
	fmt.Fprintln(e.stderr, r.Error())
	return exitFailure
}
