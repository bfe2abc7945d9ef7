// Package root is the mcpward command: the tree of commands, the global
// flags, help, version and the mapping of every outcome to an exit code.
package root

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/add"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/addjson"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/approve"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/call"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/completion"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/demo"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/doctor"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/egress"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/get"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/importcmd"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/list"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/login"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/logout"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/prompt"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/prompts"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/read"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/remove"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/resources"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/revoke"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/serve"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/show"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/tools"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/jsonout"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/telemetry"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
)

func init() {
	// Commands are listed in the order they are added (the order of a
	// session: look, approve, connect, call), not alphabetically.
	cobra.EnableCommandSorting = false
}

// NewCmdRoot returns the mcpward command with every command under it, its
// global flags bound to f.Globals. version is what --version prints.
func NewCmdRoot(f *cmdutil.Factory, version string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcpward <command> [flags]",
		Short: "Show, approve, connect and call the MCP servers your configuration defines",
		Long: `mcpward shows the MCP servers your configuration defines, which of them may be
used, and connects to them.`,
		Example: `  $ mcpward list
  $ mcpward show weather
  $ mcpward approve weather
  $ mcpward tools
  $ mcpward call weather forecast --args '{"city":"Oslo"}'`,
		Version:                    version,
		SuggestionsMinimumDistance: 2,
		SilenceErrors:              true,
		SilenceUsage:               true,
		Args:                       unknownCommand,
		// Bare "mcpward" shows the help, like "mcpward --help".
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		// Before any command that reads the configuration, a legacy
		// ./.mcpward/local.json of yours moves to the private file, once.
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			switch cmd.Name() {
			case "help", "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
				return
			}
			f.Migrate()
		},
	}
	cmd.CompletionOptions.DisableDefaultCmd = true
	cmd.SetVersionTemplate("mcpward {{.Version}}\n")
	cmd.SetFlagErrorFunc(cmdutil.FlagErrorFunc)
	cmd.SetHelpFunc(helpFunc)
	cmd.SetUsageFunc(func(c *cobra.Command) error { helpFunc(c, nil); return nil })
	cmd.SetHelpCommand(newCmdHelp())
	cmdutil.BindGlobalFlags(cmd.PersistentFlags(), f.Globals)
	cmd.Flags().BoolP("version", "v", false, "print mcpward's version")

	named := func(c *cobra.Command) *cobra.Command {
		c.ValidArgsFunction = f.CompleteServerNames
		return c
	}
	cmd.AddCommand(
		list.NewCmdList(f, nil),
		named(show.NewCmdShow(f, nil)),
		named(get.NewCmdGet(f, nil)),
		add.NewCmdAdd(f, nil),
		addjson.NewCmdAddJSON(f, nil),
		named(remove.NewCmdRemove(f, nil)),
		named(approve.NewCmdApprove(f, nil)),
		named(revoke.NewCmdRevoke(f, nil)),
		named(tools.NewCmdTools(f, nil)),
		named(call.NewCmdCall(f, nil)),
		named(prompts.NewCmdPrompts(f, nil)),
		named(prompt.NewCmdPrompt(f, nil)),
		named(resources.NewCmdResources(f, nil)),
		named(read.NewCmdRead(f, nil)),
		named(serve.NewCmdServe(f, nil)),
		named(login.NewCmdLogin(f, nil)),
		named(logout.NewCmdLogout(f, nil)),
		doctor.NewCmdDoctor(f, nil),
		egress.NewCmdEgress(f, nil),
		importcmd.NewCmdImport(f, nil),
		demo.NewCmdDemo(f, nil),
		completion.NewCmdCompletion(f, nil),
	)
	return cmd
}

// unknownCommand is the root's Args: any argument is a command that does
// not exist. The name typed is not echoed (it may be a secret typed in the
// wrong place); the commands it resembles are suggested.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return cmdutil.FlagErrorf("unknown command%s", suggest(cmd, args[0]))
}

// suggest is "; did you mean X?" for the commands typed resembles, "" when
// none.
func suggest(root *cobra.Command, typed string) string {
	s := root.SuggestionsFor(typed)
	if len(s) == 0 {
		return ""
	}
	for i := range s {
		s[i] = `"` + s[i] + `"`
	}
	return "; did you mean " + strings.Join(s, " or ") + "?"
}

// Main runs the command line args on f and returns the exit code: 0 ok, 1
// a failure (reported on stderr, or on stdout as {"error": ...} with
// --json), 2 a usage error. f.Run is set to Main itself (with version), so
// a command may run another command line on another factory.
func Main(ctx context.Context, f *cmdutil.Factory, args []string, version string) int {
	f.Run = func(ctx context.Context, sub *cmdutil.Factory, args []string) int {
		return Main(ctx, sub, args, version)
	}
	root := NewCmdRoot(f, version)
	root.SetArgs(args)
	if f.IOStreams.In != nil {
		root.SetIn(f.IOStreams.In)
	}
	root.SetOut(f.IOStreams.Out)
	root.SetErr(f.IOStreams.ErrOut)
	// The run's root span (OTEL_* on): named by the command, never its
	// arguments; the fleet's closing is inside it.
	ctx, end := telemetry.StartCommand(ctx, f.Env.TracerProvider, commandPath(root, args))
	cmd, err := root.ExecuteContextC(ctx)
	f.Close()
	end(err)
	return Report(f, cmd, err)
}

// commandPath is the path of the command args run ("mcpward list"), or
// "mcpward" when they name none: only names of the command tree, never
// what was typed.
func commandPath(root *cobra.Command, args []string) string {
	c, _, err := root.Find(args)
	if err != nil || c == nil {
		return root.Name()
	}
	return c.CommandPath()
}

// Report prints err (unless already reported) and returns its exit code.
func Report(f *cmdutil.Factory, cmd *cobra.Command, err error) int {
	ios := f.IOStreams
	switch {
	case err == nil:
		return cmdutil.ExitOK
	case errors.Is(err, cmdutil.ErrSilent), errors.Is(err, cmdutil.ErrCancelled):
		return cmdutil.ExitFailure
	case cmdutil.IsUsage(err):
		path := "mcpward"
		if cmd != nil {
			path = cmd.CommandPath()
		}
		fmt.Fprintf(ios.ErrOut, "mcpward: %s\nRun \"%s --help\" for usage.\n", termsafe.Line(err.Error()), path)
		return cmdutil.ExitUsage
	}
	if f.Globals.JSON {
		_ = jsonout.Write(ios.Out, map[string]view.Error{"error": view.ErrorOf(err)})
	} else {
		fmt.Fprintln(ios.ErrOut, view.ErrorText(err))
	}
	var noted *cmdutil.NotedError
	if errors.As(err, &noted) && noted.Note != "" {
		fmt.Fprintln(ios.ErrOut, "mcpward: "+termsafe.Line(noted.Note))
	}
	if noted != nil && noted.Hint != "" {
		fmt.Fprintln(ios.ErrOut, "mcpward: hint: "+termsafe.Line(noted.Hint))
	}
	return cmdutil.ExitFailure
}
