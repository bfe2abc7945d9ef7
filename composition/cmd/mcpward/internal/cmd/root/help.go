package root

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
)

// topics are the root help's sections after the commands and flags: what
// holds for every command.
const topics = `Files: ./ is the working directory; the workspace root is the git root, else the
nearest directory holding .mcp.json, else ./ (the same from any
subdirectory). The project file is the nearest .mcp.json from ./ up to the
root; your private (local) file lives outside the working tree, one per
workspace root, under $XDG_CONFIG_HOME/mcpward/workspaces/ (a ./.mcpward/
local.json is never read as it; one of yours is moved there once). A file at
a default location that does not exist is simply absent; a file named by a
flag must be readable; a FIFO, socket or device is refused by name, never
read. Each file is
{"mcpServers": {NAME: {...}}, "disabledMcpServers": [NAME, ...]}. A name
resolves to one whole entry from the highest tier defining it: managed, local,
project, user, plugin. If a managed file cannot be read, every server from a
lower tier is blocked. disabledMcpServers: a managed file may disable any
name, a local or user file any name not won by managed, a project or plugin
file only names won by its own tier.

Activation: managed and user servers are used on your own trust; local,
project and plugin servers need "mcpward approve NAME". An approval is bound to
the server's name, source file, fingerprint, endpoint, repository and workspace
generation: any change needs a new approval. The fingerprint covers the
definition as written (every literal, every variable's name and default), so
any edit asks again, while rotating a credential's value does not. ${VAR}
templates are expanded from mcpward's environment; secrets are never printed.

Connecting (tools, call, prompts, prompt, resources, read): only usable
servers are connected; a stdio server runs with the workspace root as its
allowed root (a managed, user or plugin server without "cwd" runs in an
empty private directory of its own, never in the workspace) and gets only
HOME, PATH, USER and the like from mcpward's environment, plus its own env;
HTTP servers are reached under the strict egress policy (https to public
addresses, http to loopback only), widened only by your own rules ("mcpward
help egress"). Text a server sends is shown with every terminal control
character escaped.

Workspace: the repository is the "origin" remote (else the first remote) of the
git repository holding the working directory, without credentials or query;
without a remote, file://GIT_ROOT; outside git, file://WORKSPACE_ROOT. The
workspace generation is a random id kept in STATE_DIR/workspaces/; delete that
file to renew the workspace and void every approval made in it.

State directory (mode 0700): store/approvals.json, store/audit.jsonl,
store/locks/, store/tokens/ (headless), workspaces/.

JSON (--json): every command prints one JSON value on stdout (its shape is in
its help); a failure is {"error": {"class", "reason", "server", "detail"}}.

Interrupting: Ctrl-C (SIGINT), SIGTERM or SIGHUP stops the command and every
server it started (each server's whole process group); mcpward then exits
with 130, 143 or 129. A second Ctrl-C exits at once, killing the servers.

Exit codes: 0 ok; 1 failure (each command's help says when); 2 usage;
129, 130, 143 interrupted by SIGHUP, SIGINT, SIGTERM.`

// helpFunc prints cmd's help on its stdout: the root's (commands, global
// flags and the topics above), or a command's own (its description, usage,
// flags, the global flags and examples).
func helpFunc(cmd *cobra.Command, _ []string) {
	w := cmd.OutOrStdout()
	if !cmd.HasParent() {
		rootHelp(w, cmd)
		return
	}
	text := cmd.Long
	if text == "" {
		text = cmd.Short
	}
	fmt.Fprintf(w, "%s\n\nUsage:\n  %s\n", strings.TrimSpace(text), useLine(cmd))
	if local := flagUsages(cmd.LocalNonPersistentFlags()); local != "" {
		fmt.Fprintf(w, "\nFlags:\n%s", local)
	}
	fmt.Fprintf(w, "\nGlobal flags:\n%s", flagUsages(cmd.Root().PersistentFlags(), "help"))
	if cmd.Example != "" {
		fmt.Fprintf(w, "\nExamples:\n%s\n", strings.TrimRight(cmd.Example, "\n"))
	}
}

// useLine is cmd's usage line with "[flags]".
func useLine(cmd *cobra.Command) string {
	line := cmd.CommandPath()
	if _, rest, ok := strings.Cut(cmd.Use, " "); ok {
		line += " " + rest
	}
	return line + " [flags]"
}

// rootHelp is the root command's help.
func rootHelp(w io.Writer, root *cobra.Command) {
	fmt.Fprintf(w, "%s\n\nUsage:\n  mcpward <command> [flags]\n\nCommands:\n", root.Long)
	width := 0
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() || c.Name() == "help" {
			width = max(width, len(c.Name()))
		}
	}
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() || c.Name() == "help" {
			fmt.Fprintf(w, "  %-*s  %s\n", width, c.Name(), c.Short)
		}
	}
	fmt.Fprintf(w, "\nGlobal flags (before or after the command):\n%s",
		flagUsages(root.PersistentFlags(), "help", "version"))
	fmt.Fprintf(w, "\nExamples:\n%s\n\n%s\n\n", root.Example, topics)
	fmt.Fprintln(w, `Run "mcpward help COMMAND" (or "mcpward COMMAND --help") for a command's details:
its flags, its output, its --json shape and its exit codes.`)
}

// flagUsages is the usage lines of fs's flags but help and version, in
// their order, then of the help and version flags named in extra, wrapped
// to 80 columns.
func flagUsages(fs *pflag.FlagSet, extra ...string) string {
	clean := pflag.NewFlagSet("", pflag.ContinueOnError)
	clean.SortFlags = false
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" && f.Name != "version" && !f.Hidden {
			clean.AddFlag(f)
		}
	})
	for _, name := range extra {
		switch name {
		case "help":
			clean.BoolP("help", "h", false, "show help for a command")
		case "version":
			clean.BoolP("version", "v", false, "print mcpward's version")
		}
	}
	return clean.FlagUsagesWrapped(80)
}

// newCmdHelp is "mcpward help [COMMAND]": a command's help; an unknown
// command is a usage error with suggestions.
func newCmdHelp() *cobra.Command {
	return &cobra.Command{
		Use:   "help [COMMAND]",
		Short: "Help about any command",
		Long: `Show the help of COMMAND: what it does, its flags and the global flags, its
output and --json shape, examples. Without COMMAND, the overview.`,
		Example: `  $ mcpward help call`,
		ValidArgsFunction: func(c *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			var names []cobra.Completion
			for _, sub := range c.Root().Commands() {
				if sub.IsAvailableCommand() {
					names = append(names, sub.Name())
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			root := c.Root()
			target, rest, err := root.Find(args)
			if err != nil || target == nil || len(rest) > 0 && len(args) > 0 {
				typed := ""
				if len(args) > 0 {
					typed = args[len(args)-1]
				}
				return cmdutil.FlagErrorf("unknown help topic%s", suggest(root, typed))
			}
			helpFunc(target, nil)
			return nil
		},
	}
}
