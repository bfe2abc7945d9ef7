// Package completion is "mcpward completion SHELL": the shell completion
// script for bash, zsh or fish.
package completion

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
)

// Shells are the shells a script is made for.
var Shells = []string{"bash", "zsh", "fish"}

// Options are completion's inputs.
type Options struct {
	Out   io.Writer
	Shell string
	// Root is the command tree the script completes.
	Root *cobra.Command
}

// NewCmdCompletion returns the completion command; runF, when not nil,
// replaces Run.
func NewCmdCompletion(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Out: f.IOStreams.Out}
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Print the shell completion script for bash, zsh or fish",
		Long: `Print the script that teaches your shell to complete mcpward's commands,
flags and server names. Load it once in the current shell, or install it for
every new one:

bash (needs the bash-completion package):
  source <(mcpward completion bash)
  mcpward completion bash > ~/.local/share/bash-completion/completions/mcpward

zsh (compinit must be enabled):
  mcpward completion zsh > "${fpath[1]}/_mcpward"

fish:
  mcpward completion fish > ~/.config/fish/completions/mcpward.fish`,
		Example:   `  $ source <(mcpward completion bash)`,
		ValidArgs: Shells,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.ExactArgs(1)(cmd, args); err != nil {
				return err
			}
			for _, s := range Shells {
				if args[0] == s {
					return nil
				}
			}
			return cmdutil.FlagErrorf("completion: unknown shell (want bash, zsh or fish)")
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Shell, opts.Root = args[0], cmd.Root()
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
}

// Run writes the script of opts.Shell.
func Run(_ context.Context, opts *Options) error {
	switch opts.Shell {
	case "bash":
		return opts.Root.GenBashCompletionV2(opts.Out, true)
	case "zsh":
		return opts.Root.GenZshCompletion(opts.Out)
	case "fish":
		return opts.Root.GenFishCompletion(opts.Out, true)
	}
	return fmt.Errorf("completion: unknown shell")
}
