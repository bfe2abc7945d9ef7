// Package importcmd is "mcpward import --from TOOL": copy the MCP servers
// another host's configuration file defines into one of mcpward's own
// files, decoded as strictly as mcpward's format (adapters/hostconfig).
//
// The target file is read and written with internal/editing, as "add"
// and "remove" do: order kept, atomic, mode bits kept, never another
// host's own file.
package importcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/adapters/hostconfig"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/editing"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/jsonout"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/core/refusal"
)

// The scopes, Claude Code's names.
const (
	ScopeLocal   = "local"
	ScopeProject = "project"
	ScopeUser    = "user"
)

// ReasonSourceUnreadable: the file to import from does not exist or cannot
// be read. Class Config.
const ReasonSourceUnreadable = "import_source_unreadable"

// ReasonAlreadyOurs: --from claude-code --scope project: Claude Code's
// project file is .mcp.json, which mcpward already reads. Class Config.
const ReasonAlreadyOurs = "already_mcpward_format"

// ReasonNoLocation: no default file is known for the source or the scope
// (HOME unset); name one with --file or the scope's global flag. Class
// Config.
const ReasonNoLocation = "no_default_location"

// maxSourceBytes is the largest file import reads.
const maxSourceBytes = 4 << 20

// Options are import's inputs.
type Options struct {
	IO   *iostreams.IOStreams
	Env  app.Env
	JSON bool
	// Globals are the global flags: --local, --project and --user name the
	// file a scope writes into.
	Globals app.Options
	// From is the tool whose file is read (a hostconfig.Format).
	From string
	// Scope is local, project or user: the file written into and, for
	// claude-code, the part of ~/.claude.json read (local: the workspace's
	// projects entry; user: the top level).
	Scope string
	// File is --file: the file to read instead of the tool's default.
	File   string
	DryRun bool
	Force  bool
}

// Finding is one dropped, refused or disabled server or field.
type Finding = hostconfig.Finding

// JSON is import --json's output.
type JSON struct {
	From   string `json:"from"`
	File   string `json:"file"`
	Scope  string `json:"scope"`
	Target string `json:"target"`
	DryRun bool   `json:"dryRun"`
	// Imported are the servers added (or with --dry-run, to be added).
	Imported []string `json:"imported"`
	// Replaced are the servers whose entries --force replaced.
	Replaced []string `json:"replaced"`
	// Skipped are the servers already defined in the target (not replaced
	// without --force).
	Skipped []string `json:"skipped"`
	// Disabled are the imported servers put in the disable overlay.
	Disabled []string `json:"disabled"`
	// Findings are what was dropped, refused or disabled, per server.
	Findings []Finding `json:"findings"`
}

// NewCmdImport returns the import command; runF, when not nil, replaces
// Run.
func NewCmdImport(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Env: f.Env}
	formats := make([]string, 0, 6)
	for _, fm := range hostconfig.Formats() {
		formats = append(formats, string(fm))
	}
	cmd := &cobra.Command{
		Use:   "import --from TOOL [--scope local|project|user] [--file PATH] [--dry-run] [--force]",
		Short: "Copy another tool's MCP servers into mcpward's files",
		Long: `Copy the MCP servers another tool's configuration file defines into one of
mcpward's own files: local (./.mcpward/local.json, the default), project
(./.mcp.json) or user (your mcpward file for every workspace); --local,
--project and --user name another file for that scope.

TOOL and the file read (unless --file names one):
  claude-code     ~/.claude.json: --scope user reads its top-level mcpServers,
                  --scope local the mcpServers of this workspace's project
                  entry (Claude Code's scopes); its project scope is .mcp.json,
                  which mcpward already reads
  claude-desktop  claude_desktop_config.json (~/.config/Claude on Linux,
                  ~/Library/Application Support/Claude on macOS)
  cursor          ./.cursor/mcp.json with --scope project, else ~/.cursor/mcp.json
  vscode          ./.vscode/mcp.json
  codex           $CODEX_HOME/config.toml, else ~/.codex/config.toml
  gemini          ./.gemini/settings.json with --scope project, else
                  ~/.gemini/settings.json

The file is decoded as strictly as mcpward's own format. Fields with a meaning
are carried over, variable syntaxes included (${env:X} and $X become ${X};
${workspaceFolder} becomes this directory). Fields that would grant something
(trust, autoApprove, alwaysAllow) are dropped and reported: an imported server
needs approval like any other. Tool filters (includeTools/excludeTools,
enabled_tools/disabled_tools) become includeTools/excludeTools. A server with
a field mcpward cannot keep (an unknown field, the legacy SSE transport,
${input:...}, envFile, a malformed tool filter) is refused by name and not
imported; the others are. Into the shared project file, a server holding a literal credential (a value under a credential-shaped
env or header name that is not a ${VAR}, a token-shaped argument or URL part)
is refused too: write it as ${VAR}, or import into the local or user scope. A server the tool
disables is imported into "disabledMcpServers".

Existing servers and every other key of the target file are kept. A name the
target already defines is reported and skipped; --force replaces its entry.
The file is written atomically (a temporary file renamed over it), keeping its
mode bits. --dry-run writes nothing and reports what would be done.

With --json: {"from", "file", "scope", "target", "dryRun", "imported",
"replaced", "skipped", "disabled", "findings" (each {"server", "kind":
dropped|refused|disabled, "field", "reason"})}.

Exit code 1 when the file cannot be read or is malformed (with its line and
column), or the target cannot be written; refused servers do not change the
exit code.`,
		Example: `  $ mcpward import --from claude-code --scope user
  $ mcpward import --from vscode --scope project --dry-run
  $ mcpward import --from codex --file ./config.toml --json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON, opts.Globals = f.Globals.JSON, f.Globals.Options
			if !slices.Contains(formats, opts.From) {
				return cmdutil.FlagErrorf("--from must be one of %s", strings.Join(formats, ", "))
			}
			if opts.Scope != ScopeLocal && opts.Scope != ScopeProject && opts.Scope != ScopeUser {
				return cmdutil.FlagErrorf("--scope must be local, project or user")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.From, "from", "", "the `TOOL` whose file to read: "+strings.Join(formats, ", "))
	fl.StringVar(&opts.Scope, "scope", ScopeLocal, "`SCOPE` to write into: local, project or user")
	fl.StringVar(&opts.File, "file", "", "the `PATH` to read instead of the tool's default file")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "write nothing; report what would be imported")
	fl.BoolVar(&opts.Force, "force", false, "replace the entries of names the target already defines")
	_ = cmd.RegisterFlagCompletionFunc("from", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("scope", cobra.FixedCompletions([]string{ScopeLocal, ScopeProject, ScopeUser}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// home returns $HOME when it is absolute.
func home(e app.Env) string {
	if h, ok := e.Lookup("HOME"); ok && filepath.IsAbs(h) {
		return h
	}
	return ""
}

// sourcePath is the default file of a tool for a scope, "" when unknown.
func sourcePath(from, scope string, e app.Env) string {
	h := home(e)
	under := func(parts ...string) string {
		if h == "" {
			return ""
		}
		return filepath.Join(append([]string{h}, parts...)...)
	}
	switch hostconfig.Format(from) {
	case hostconfig.ClaudeCode:
		return under(".claude.json")
	case hostconfig.ClaudeDesktop:
		if runtime.GOOS == "darwin" {
			return under("Library", "Application Support", "Claude", "claude_desktop_config.json")
		}
		if d, ok := e.Lookup("XDG_CONFIG_HOME"); ok && filepath.IsAbs(d) {
			return filepath.Join(d, "Claude", "claude_desktop_config.json")
		}
		return under(".config", "Claude", "claude_desktop_config.json")
	case hostconfig.Cursor:
		if scope == ScopeProject {
			return filepath.Join(e.Cwd, ".cursor", "mcp.json")
		}
		return under(".cursor", "mcp.json")
	case hostconfig.VSCode:
		return filepath.Join(e.Cwd, ".vscode", "mcp.json")
	case hostconfig.Codex:
		if d, ok := e.Lookup("CODEX_HOME"); ok && filepath.IsAbs(d) {
			return filepath.Join(d, "config.toml")
		}
		return under(".codex", "config.toml")
	case hostconfig.Gemini:
		if scope == ScopeProject {
			return filepath.Join(e.Cwd, ".gemini", "settings.json")
		}
		return under(".gemini", "settings.json")
	}
	return ""
}

// readSource reads one regular file of at most maxSourceBytes.
func readSource(path string) ([]byte, error) {
	fail := &refusal.Error{Class: refusal.Config, Reason: ReasonSourceUnreadable}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			fail.Detail = "the file does not exist"
		}
		return nil, fail
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, fail
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSourceBytes+1))
	if err != nil || len(data) > maxSourceBytes {
		return nil, fail
	}
	return data, nil
}

// Run reads, decodes and merges, then reports.
func Run(_ context.Context, opts *Options) error {
	from := hostconfig.Format(opts.From)
	if from == hostconfig.ClaudeCode && opts.Scope == ScopeProject {
		return &refusal.Error{Class: refusal.Config, Reason: ReasonAlreadyOurs, Detail: "Claude Code's project servers are in .mcp.json, which mcpward reads as it is"}
	}
	src := opts.File
	if src == "" {
		src = sourcePath(opts.From, opts.Scope, opts.Env)
	} else if !filepath.IsAbs(src) {
		src = filepath.Join(opts.Env.Cwd, src)
	}
	target, terr := editing.Path(opts.Globals, opts.Env, editing.Scope(opts.Scope))
	if src == "" || terr != nil {
		return &refusal.Error{Class: refusal.Config, Reason: ReasonNoLocation, Detail: "HOME is not set: name the files with --file and the scope's flag"}
	}
	data, err := readSource(src)
	if err != nil {
		return &cmdutil.NotedError{Err: err, Note: "reading " + src}
	}
	res, err := hostconfig.Decode(from, data, hostconfig.Options{Workspace: opts.Env.Cwd, Local: opts.Scope == ScopeLocal})
	if err != nil {
		return &cmdutil.NotedError{Err: err, Note: "decoding " + src}
	}
	file, err := loadTarget(opts.Scope, target)
	if err != nil {
		return &cmdutil.NotedError{Err: err, Note: "reading " + target}
	}
	// A shared project file never receives a literal credential.
	findings := res.Findings
	var exclude []string
	if opts.Scope == ScopeProject {
		for _, f := range literalCredentials(res.JSON) {
			exclude = append(exclude, f.Server)
			findings = append(findings, f)
		}
		slices.SortStableFunc(findings, func(a, b Finding) int {
			if c := strings.Compare(a.Server, b.Server); c != 0 {
				return c
			}
			return strings.Compare(a.Field, b.Field)
		})
	}
	m, err := merge(file, res.JSON, res.Disabled, exclude, opts.Force)
	if err != nil {
		return &cmdutil.NotedError{Err: err, Note: "reading " + target}
	}
	if !opts.DryRun && (len(m.added) > 0 || len(m.replaced) > 0) {
		if err := saveTarget(file); err != nil {
			return &cmdutil.NotedError{Err: err, Note: "writing " + target}
		}
	}
	var disabled []string
	for _, n := range res.Disabled {
		if slices.Contains(m.added, n) || slices.Contains(m.replaced, n) {
			disabled = append(disabled, n)
		}
	}
	out := JSON{
		From: opts.From, File: src, Scope: opts.Scope, Target: target, DryRun: opts.DryRun,
		Imported: nonNil(m.added), Replaced: nonNil(m.replaced), Skipped: nonNil(m.skipped),
		Disabled: nonNil(disabled), Findings: findings,
	}
	if out.Findings == nil {
		out.Findings = []Finding{}
	}
	if opts.JSON {
		_ = jsonout.Write(opts.IO.Out, out)
		return nil
	}
	writeText(opts.IO.Out, out)
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// writeText prints import's report.
func writeText(w io.Writer, o JSON) {
	verb := "imported"
	if o.DryRun {
		verb = "would import"
	}
	fmt.Fprintf(w, "%s %d server%s from %s (%s) into %s (%s)\n", verb, len(o.Imported), plural(len(o.Imported)),
		o.From, termsafe.Line(o.File), o.Scope, termsafe.Line(o.Target))
	for _, n := range o.Imported {
		fmt.Fprintf(w, "  + %s%s\n", termsafe.Line(n), disabledMark(o.Disabled, n))
	}
	for _, n := range o.Replaced {
		fmt.Fprintf(w, "  ~ %s (replaced)%s\n", termsafe.Line(n), disabledMark(o.Disabled, n))
	}
	if len(o.Skipped) > 0 {
		fmt.Fprintln(w, "skipped, already defined in the target (--force replaces):")
		for _, n := range o.Skipped {
			fmt.Fprintf(w, "  = %s\n", termsafe.Line(n))
		}
	}
	section := func(kind hostconfig.FindingKind, title string) {
		first := true
		for _, f := range o.Findings {
			if f.Kind != kind {
				continue
			}
			if first {
				fmt.Fprintln(w, title)
				first = false
			}
			field := ""
			if f.Field != "" {
				field = " " + termsafe.Line(f.Field)
			}
			fmt.Fprintf(w, "  %s%s: %s\n", termsafe.Line(f.Server), field, f.Reason)
		}
	}
	section(hostconfig.FindingDropped, "dropped (not carried over; the server was):")
	section(hostconfig.FindingRefused, "refused (not imported):")
	if slices.ContainsFunc(o.Findings, func(f Finding) bool { return f.Reason == ReasonLiteralCredential }) {
		fmt.Fprintln(w, "A shared project file takes no literal credential: write it as ${VAR} (set VAR in the environment), or import with --scope local or user.")
	}
	if len(o.Imported)+len(o.Replaced) > 0 {
		fmt.Fprintln(w, `Imported servers are checked like any other: run "mcpward list", then "mcpward approve NAME".`)
	}
}

func disabledMark(disabled []string, n string) string {
	if slices.Contains(disabled, n) {
		return " (disabled, as in the source)"
	}
	return ""
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
