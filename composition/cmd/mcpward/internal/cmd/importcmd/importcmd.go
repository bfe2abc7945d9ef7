// Package importcmd is "mcpward import --from TOOL": copy the MCP servers
// another host's configuration file defines into one of mcpward's own
// files, decoded by meaning (adapters/hostconfig): what mcpward can run is
// carried over as written, what changes nothing is dropped and reported,
// and every server that is not imported is named with its reason.
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
	"path/filepath"
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

// ReasonRenameUnmatched: a --rename names no server of the file read
// (nothing is written). Class Config.
const ReasonRenameUnmatched = "rename_unmatched"

// ReasonInputUnmatched: an --input names an id no imported server uses
// (nothing is written). Class Config.
const ReasonInputUnmatched = "input_unmatched"

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
	// projects entry; user: the top level); for the other tools, which of
	// their files is read (project: the workspace's; user: the user's;
	// local: the workspace's, else the user's).
	Scope string
	// File is --file: the file to read instead of the tool's default.
	File   string
	DryRun bool
	Force  bool
	// Rename is --rename OLD=NEW: the server OLD (as the file spells it)
	// is imported as NEW.
	Rename map[string]string
	// Drop is --drop KEY: a field outside the tool's format to drop
	// instead of refusing the server.
	Drop []string
	// Inputs is --input ID=NAME: VS Code's ${input:ID} becomes ${NAME}.
	Inputs map[string]string

	// extensions are the Gemini CLI extensions installed, read once.
	extensions     []hostconfig.Extension
	extensionsRead bool
}

// Finding is one dropped, refused, disabled, renamed or mapped server or
// field.
type Finding = hostconfig.Finding

// JSON is import --json's output.
type JSON struct {
	From   string `json:"from"`
	File   string `json:"file"`
	Scope  string `json:"scope"`
	Target string `json:"target"`
	DryRun bool   `json:"dryRun"`
	// Defined is how many servers the file defines: each is imported,
	// replaced, skipped or refused (findings).
	Defined int `json:"defined"`
	// Imported are the servers added (or with --dry-run, to be added),
	// under their new names when renamed.
	Imported []string `json:"imported"`
	// Replaced are the servers whose entries --force replaced.
	Replaced []string `json:"replaced"`
	// Skipped are the servers already defined in the target (not replaced
	// without --force).
	Skipped []string `json:"skipped"`
	// Disabled are the imported servers put in the disable overlay.
	Disabled []string `json:"disabled"`
	// Findings are what was renamed, mapped, dropped, refused or disabled,
	// per server and field.
	Findings []Finding `json:"findings"`
	// Notes are about the file as a whole (where its servers were read,
	// why it defines none).
	Notes []hostconfig.Note `json:"notes"`
	// Elsewhere are the tool's other files (or Claude Code's other scope)
	// that define servers this run did not read.
	Elsewhere []Candidate `json:"elsewhere"`
	// Copied are the imported (or replaced) servers whose literal
	// credentials were copied into the target as the source wrote them:
	// never into the project file (such a server is refused there), so
	// only a local or user import has any. Fields only, never values.
	Copied []CopiedLiterals `json:"copiedLiterals"`
}

// NewCmdImport returns the import command; runF, when not nil, replaces
// Run.
func NewCmdImport(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Env: f.Env}
	formats := make([]string, 0, 8)
	for _, fm := range hostconfig.Formats() {
		formats = append(formats, string(fm))
	}
	var renames, inputs []string
	cmd := &cobra.Command{
		Use:   "import --from TOOL [--scope local|project|user] [--file PATH] [--rename OLD=NEW] [--input ID=NAME] [--drop KEY] [--dry-run] [--force]",
		Short: "Copy another tool's MCP servers into mcpward's files",
		Long: `Copy the MCP servers another tool's configuration file defines into one of
mcpward's own files: local (your private file for this workspace, outside
the working tree; the default), project (the workspace's .mcp.json) or user
(your mcpward file for every workspace); --local, --project and --user name
another file for that scope ("mcpward help add" lists the locations).

TOOL and the files read (unless --file names one); with --scope project the
workspace's, with --scope user the user's, with --scope local the workspace's
and then the user's (the first that defines servers):
  claude-code     ~/.claude.json: --scope user reads its top-level mcpServers,
                  --scope local the mcpServers of this workspace's project
                  entry (Claude Code's scopes); its project scope is .mcp.json,
                  which mcpward already reads
  claude-desktop  claude_desktop_config.json (~/.config/Claude on Linux,
                  ~/Library/Application Support/Claude on macOS)
  cursor          ./.cursor/mcp.json; ~/.cursor/mcp.json
  vscode          ./.vscode/mcp.json, ./.vscode/settings.json ("mcp":
                  {"servers"}); the user's mcp.json, settings.json (Code/User)
  codex           ./.codex/config.toml; $CODEX_HOME/config.toml, else
                  ~/.codex/config.toml
  gemini          ./.gemini/settings.json; ~/.gemini/settings.json (an
                  extension's gemini-extension.json with --file)
  cline           Cline's cline_mcp_settings.json (VS Code's globalStorage,
                  or ~/.cline/data/settings)
  roo             ./.roo/mcp.json; Roo Code's mcp_settings.json

Files are decoded by meaning. Fields mcpward can keep are carried over as
written, variables mapped (${env:X} and $X become ${X}; VS Code's
${input:ID} becomes ${ID_IN_UPPER_SNAKE}, or --input ID=NAME's name, a
variable you set; an envFile's names become ${NAME} references, never its
values; ${workspaceFolder} becomes this workspace, written relative to it in
the shared project file). Fields that change nothing about what runs
(descriptions, comments, gallery metadata, "enabled": true, Codex's
"required") are dropped and reported; grants (trust, autoApprove,
alwaysAllow, Codex's approval modes) are dropped and never honoured; what
narrows a server (disabled flags, tool filters, disabled tool lists) is
always kept. A name mcpward cannot use becomes the nearest valid one
("microsoft/playwright-mcp" → "microsoft-playwright-mcp"); --rename OLD=NEW
picks another, and two servers that would share a name are refused, never
merged. A server with a field mcpward cannot keep (the legacy SSE
transport, an OAuth client secret) or does not know is refused by name with
what to do; --drop KEY imports it without an unknown field. Into the shared
project file, a server holding a literal credential is refused too: write it
as ${VAR}, or import into the local or user scope.

Existing servers and every other key of the target file are kept. A name the
target already defines is reported and skipped; --force replaces its entry.
The file is written atomically (a temporary file renamed over it), keeping its
mode bits. --dry-run writes nothing and reports what would be done.

With --json: {"from", "file", "scope", "target", "dryRun", "defined",
"imported", "replaced", "skipped", "disabled", "findings" (each {"server",
"name" when renamed, "kind": renamed|mapped|dropped|refused|disabled,
"field", "reason", "variable", "secret"}), "notes", "elsewhere"}: every
server the file defines is imported, replaced, skipped or refused.

Exit code 1 when the file cannot be read or is malformed (with its line,
column and what is wrong there), a --rename or --input matches nothing, or
the target cannot be written; refused servers do not change the exit code.`,
		Example: `  $ mcpward import --from claude-code --scope user
  $ mcpward import --from vscode --scope project --dry-run
  $ mcpward import --from vscode --rename 'microsoft/playwright-mcp=playwright' --input github_mcp_pat=GITHUB_TOKEN
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
			var err error
			if opts.Rename, err = pairs("--rename", "OLD=NEW", renames, hostconfig.ValidName,
				"NEW must be 1 to 64 letters, digits, \"_\", \".\" or \"-\""); err != nil {
				return err
			}
			if opts.Inputs, err = pairs("--input", "ID=NAME", inputs, hostconfig.ValidVariable,
				"NAME must be a variable name: letters, digits and \"_\", not starting with a digit"); err != nil {
				return err
			}
			for _, k := range opts.Drop {
				if k == "" {
					return cmdutil.FlagErrorf("--drop needs a field name")
				}
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
	fl.StringArrayVar(&renames, "rename", nil, "import the server `OLD=NEW` under the name NEW (repeatable)")
	fl.StringArrayVar(&inputs, "input", nil, "write VS Code's ${input:ID} as ${NAME}: `ID=NAME` (repeatable)")
	fl.StringArrayVar(&opts.Drop, "drop", nil, "drop the unknown field `KEY` instead of refusing its server (repeatable)")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "write nothing; report what would be imported")
	fl.BoolVar(&opts.Force, "force", false, "replace the entries of names the target already defines")
	_ = cmd.RegisterFlagCompletionFunc("from", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("scope", cobra.FixedCompletions([]string{ScopeLocal, ScopeProject, ScopeUser}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// pairs parses repeated KEY=VALUE flags, split at the last "=", VALUE
// checked by valid; a repeated KEY is a usage error.
func pairs(flag, form string, vals []string, valid func(string) bool, rule string) (map[string]string, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(vals))
	for _, v := range vals {
		i := strings.LastIndexByte(v, '=')
		if i <= 0 {
			return nil, cmdutil.FlagErrorf("%s takes %s", flag, form)
		}
		k, val := v[:i], v[i+1:]
		if !valid(val) {
			return nil, cmdutil.FlagErrorf("%s %s: %s", flag, form, rule)
		}
		if _, dup := out[k]; dup {
			return nil, cmdutil.FlagErrorf("%s names %s twice", flag, termsafe.Line(k))
		}
		out[k] = val
	}
	return out, nil
}

// decodeOptions are the hostconfig options for reading path.
func decodeOptions(opts *Options, path string) hostconfig.Options {
	o := hostconfig.Options{
		Workspace: workspaceOf(path, opts.Env),
		Local:     opts.Scope == ScopeLocal,
		Portable:  opts.Scope == ScopeProject,
		Rename:    opts.Rename,
		Drop:      opts.Drop,
		Inputs:    opts.Inputs,
		EnvFile:   readEnvFile,
	}
	if hostconfig.Format(opts.From) == hostconfig.ClaudeCode {
		// Claude Code keys projects by the directory it ran in.
		o.Workspace = opts.Env.Cwd
	}
	if o.Portable {
		o.Root, _ = app.FindWorkspace(opts.Env)
	}
	switch {
	case filepath.Base(path) == "gemini-extension.json":
		o.ExtensionPath = filepath.Dir(path)
	case hostconfig.Format(opts.From) == hostconfig.Gemini:
		if !opts.extensionsRead {
			opts.extensions, opts.extensionsRead = loadExtensions(opts.Env), true
		}
		o.Extensions = opts.extensions
	}
	return o
}

// read is one source file read and decoded.
type read struct {
	loc  location
	res  *hostconfig.Result
	err  error
	data bool // the file exists
}

// pick reads the files import looks at and returns the one to import: the
// first that defines servers, else the first that exists (to say why it
// imports nothing). elsewhere are the tool's other files that define
// servers. A file that does not exist is skipped; a malformed or
// unreadable one is an error only when it is the one picked.
func pick(opts *Options) (read, []Candidate, error) {
	from := hostconfig.Format(opts.From)
	if opts.File != "" {
		src := opts.File
		if !filepath.IsAbs(src) {
			src = filepath.Join(opts.Env.Cwd, src)
		}
		r := readOne(opts, location{path: src, scope: opts.Scope})
		return r, nil, r.err
	}
	locs := locations(from, opts.Scope, opts.Env)
	if len(locs) == 0 {
		return read{}, nil, &refusal.Error{Class: refusal.Config, Reason: ReasonNoLocation, Detail: "HOME is not set: name the files with --file and the scope's flag"}
	}
	var picked *read
	var first *read
	reads := map[string]read{}
	for _, l := range locs {
		r := readOne(opts, l)
		reads[l.path] = r
		if !r.data {
			continue
		}
		if first == nil {
			first = &r
		}
		if picked == nil && r.err == nil && r.res.Defined > 0 {
			picked = &r
		}
	}
	switch {
	case picked != nil:
	case first != nil:
		picked = first
	default:
		paths := make([]string, len(locs))
		for i, l := range locs {
			paths[i] = l.path
		}
		return read{loc: locs[0]}, nil, &refusal.Error{Class: refusal.Config, Reason: ReasonSourceUnreadable,
			Detail: "no file at " + strings.Join(paths, ", ")}
	}
	if picked.err != nil {
		return *picked, nil, picked.err
	}
	// The tool's other files, of either scope, that define servers.
	var elsewhere []Candidate
	for _, l := range locations(from, ScopeLocal, opts.Env) {
		if l.path == picked.loc.path {
			continue
		}
		r, ok := reads[l.path]
		if !ok {
			r = readOne(opts, l)
		}
		if r.err == nil && r.data && r.res.Defined > 0 {
			elsewhere = append(elsewhere, Candidate{From: opts.From, Scope: opts.Scope, Path: l.path, Servers: r.res.Defined, File: true})
		}
	}
	if from == hostconfig.Gemini {
		elsewhere = append(elsewhere, extensionsElsewhere(opts, picked.res)...)
	}
	return *picked, elsewhere, nil
}

// extensionsElsewhere names the Gemini CLI extensions defining servers the
// settings read do not name (those it names were imported with the
// extension's definition): Gemini CLI runs them too.
func extensionsElsewhere(opts *Options, res *hostconfig.Result) []Candidate {
	named := map[string]bool{}
	for _, n := range res.Servers {
		named[n] = true
	}
	for _, f := range res.Findings {
		named[f.Server], named[f.Name] = true, true
	}
	var out []Candidate
	for _, x := range opts.extensions {
		path := filepath.Join(x.Dir, "gemini-extension.json")
		ext, err := hostconfig.Decode(hostconfig.Gemini, x.Data, hostconfig.Options{Workspace: opts.Env.Cwd, ExtensionPath: x.Dir})
		if err != nil {
			continue
		}
		n := 0
		for _, s := range ext.Servers {
			if !named[s] {
				n++
			}
		}
		for _, f := range ext.Findings {
			if f.Kind == hostconfig.FindingRefused && !named[f.Server] {
				n++
			}
		}
		if n > 0 {
			out = append(out, Candidate{From: opts.From, Scope: opts.Scope, Path: path, Servers: n, File: true})
		}
	}
	return out
}

// readOne reads and decodes one file.
func readOne(opts *Options, l location) read {
	data, err := readSource(l.path)
	if errors.Is(err, errNotExist) {
		return read{loc: l, err: &cmdutil.NotedError{Err: err, Note: "reading " + l.path}}
	}
	if err != nil {
		return read{loc: l, data: true, err: &cmdutil.NotedError{Err: err, Note: "reading " + l.path}}
	}
	res, err := hostconfig.Decode(hostconfig.Format(opts.From), data, decodeOptions(opts, l.path))
	if err != nil {
		return read{loc: l, data: true, err: &cmdutil.NotedError{Err: err, Note: "decoding " + l.path}}
	}
	return read{loc: l, data: true, res: res}
}

// Run reads, decodes and merges, then reports.
func Run(_ context.Context, opts *Options) error {
	from := hostconfig.Format(opts.From)
	if from == hostconfig.ClaudeCode && opts.Scope == ScopeProject {
		return &refusal.Error{Class: refusal.Config, Reason: ReasonAlreadyOurs, Detail: "Claude Code's project servers are in .mcp.json, which mcpward reads as it is"}
	}
	target, terr := editing.Path(opts.Globals, opts.Env, editing.Scope(opts.Scope))
	if terr != nil {
		return &refusal.Error{Class: refusal.Config, Reason: ReasonNoLocation, Detail: "HOME is not set: name the files with --file and the scope's flag"}
	}
	src, elsewhere, err := pick(opts)
	if err != nil {
		return err
	}
	res := src.res
	if len(res.UnmatchedRenames) > 0 {
		return &refusal.Error{Class: refusal.Config, Reason: ReasonRenameUnmatched,
			Detail: "--rename names no server of " + src.loc.path + ": " + quoteList(res.UnmatchedRenames)}
	}
	if len(res.UnmatchedInputs) > 0 {
		return &refusal.Error{Class: refusal.Config, Reason: ReasonInputUnmatched,
			Detail: "--input names no ${input:ID} of " + src.loc.path + ": " + quoteList(res.UnmatchedInputs)}
	}
	for _, n := range res.Notes {
		if n.Reason == hostconfig.NoteOtherScope {
			scope := ScopeUser
			if n.Field == "projects" {
				scope = ScopeLocal
			}
			elsewhere = append(elsewhere, Candidate{From: opts.From, Scope: scope, Path: src.loc.path, Servers: n.Count})
		}
	}
	file, err := loadTarget(opts.Scope, target)
	if err != nil {
		return &cmdutil.NotedError{Err: err, Note: "reading " + target}
	}
	// A shared project file never receives a literal credential.
	findings := res.Findings
	var exclude []string
	literals := literalSecrets(res.JSON)
	if opts.Scope == ScopeProject {
		for _, f := range literalCredentials(literals) {
			exclude = append(exclude, f.Server)
			findings = append(findings, originalName(res.Findings, f))
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
		From: opts.From, File: src.loc.path, Scope: opts.Scope, Target: target, DryRun: opts.DryRun, Defined: res.Defined,
		Imported: nonNil(m.added), Replaced: nonNil(m.replaced), Skipped: nonNil(m.skipped),
		Disabled: nonNil(disabled), Findings: findings, Notes: res.Notes, Elsewhere: elsewhere,
		Copied: copiedLiterals(literals, m.added, m.replaced),
	}
	if out.Findings == nil {
		out.Findings = []Finding{}
	}
	if out.Notes == nil {
		out.Notes = []hostconfig.Note{}
	}
	if out.Elsewhere == nil {
		out.Elsewhere = []Candidate{}
	}
	if opts.JSON {
		_ = jsonout.Write(opts.IO.Out, out)
		return nil
	}
	writeText(opts.IO.Out, out)
	return nil
}

// originalName returns the literal-credential finding f (about a server
// by its imported name) with Server the name the source spells and Name
// the imported one, as every other finding of a renamed server has.
func originalName(findings []Finding, f Finding) Finding {
	for _, o := range findings {
		if o.Kind == hostconfig.FindingRenamed && o.Name == f.Server {
			f.Server, f.Name = o.Server, o.Name
		}
	}
	return f
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = termsafe.Line(fmt.Sprintf("%q", n))
	}
	return strings.Join(q, ", ")
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// writeText prints import's report: what was imported and under which
// name, the variables to set, what was mapped, dropped and refused (with
// what to do), why nothing was imported when nothing was, and what the
// target scope needs next.
func writeText(w io.Writer, o JSON) {
	verb := "imported"
	if o.DryRun {
		verb = "would import"
	}
	fmt.Fprintf(w, "%s %d server%s from %s (%s) into %s (%s)\n", verb, len(o.Imported), plural(len(o.Imported)),
		o.From, termsafe.Line(o.File), o.Scope, termsafe.Line(o.Target))
	was := map[string]string{}
	for _, f := range o.Findings {
		if f.Kind == hostconfig.FindingRenamed {
			was[f.Name] = f.Server
		}
	}
	from := func(n string) string {
		if s, ok := was[n]; ok {
			return " (from " + termsafe.Line(s) + ")"
		}
		return ""
	}
	for _, n := range o.Imported {
		fmt.Fprintf(w, "  + %s%s%s\n", termsafe.Line(n), from(n), disabledMark(o.Disabled, n))
	}
	for _, n := range o.Replaced {
		fmt.Fprintf(w, "  ~ %s (replaced)%s%s\n", termsafe.Line(n), from(n), disabledMark(o.Disabled, n))
	}
	if len(o.Skipped) > 0 {
		fmt.Fprintln(w, "skipped, already defined in the target (--force replaces):")
		for _, n := range o.Skipped {
			fmt.Fprintf(w, "  = %s%s\n", termsafe.Line(n), from(n))
		}
	}
	// who names a finding's server as the report shows it.
	who := func(f Finding) string {
		if f.Name != "" && f.Kind != hostconfig.FindingRefused {
			return termsafe.Line(f.Name)
		}
		return termsafe.Line(f.Server)
	}
	field := func(f Finding) string {
		if f.Field == "" {
			return ""
		}
		return " " + termsafe.Line(f.Field)
	}
	section := func(title string, match func(Finding) bool, line func(Finding) string) {
		first := true
		for _, f := range o.Findings {
			if !match(f) {
				continue
			}
			if first {
				fmt.Fprintln(w, title)
				first = false
			}
			fmt.Fprintln(w, "  "+line(f))
		}
	}
	kind := func(k hostconfig.FindingKind) func(Finding) bool {
		return func(f Finding) bool { return f.Kind == k }
	}
	isVar := func(f Finding) bool { return f.Kind == hostconfig.FindingMapped && f.Variable != "" }
	section(`renamed (a name is 1 to 64 letters, digits, "_", "." or "-"; --rename 'OLD=NEW' picks another):`,
		kind(hostconfig.FindingRenamed), func(f Finding) string {
			return termsafe.Line(f.Server) + " -> " + termsafe.Line(f.Name)
		})
	section("set these variables where mcpward runs (their values are read when a server starts, never stored):",
		isVar, func(f Finding) string {
			s := termsafe.Line(f.Variable)
			if f.Secret {
				s += ", secret"
			}
			return s + " (" + who(f) + field(f) + ": " + reasonText(f.Reason) + ")"
		})
	section("mapped (carried over in another form):",
		func(f Finding) bool { return f.Kind == hostconfig.FindingMapped && f.Variable == "" }, func(f Finding) string {
			return who(f) + field(f) + ": " + reasonText(f.Reason)
		})
	section("dropped (not carried over; the server was):", kind(hostconfig.FindingDropped), func(f Finding) string {
		return who(f) + field(f) + ": " + f.Reason + hint(f.Reason)
	})
	section("refused (not imported):", kind(hostconfig.FindingRefused), func(f Finding) string {
		s := who(f)
		if f.Name != "" {
			s += " (as " + termsafe.Line(f.Name) + ")"
		}
		return s + field(f) + ": " + f.Reason + hint(f.Reason)
	})
	for _, n := range o.Notes {
		if t := noteText(n, o); t != "" {
			fmt.Fprintln(w, t)
		}
	}
	refused := 0
	for _, f := range o.Findings {
		if f.Kind == hostconfig.FindingRefused {
			refused++
		}
	}
	explained := slices.ContainsFunc(o.Notes, func(n hostconfig.Note) bool {
		return n.Reason == hostconfig.NoteNoServersKey || n.Reason == hostconfig.NoteNoProject
	})
	switch {
	case o.Defined == 0 && !explained:
		fmt.Fprintf(w, "%s defines no server (its list of servers is empty).\n", termsafe.Line(o.File))
	case o.Defined > 0 && len(o.Imported)+len(o.Replaced)+len(o.Skipped) == 0:
		fmt.Fprintf(w, "None of the %d server%s %s defines could be imported: each is refused above with what to do.\n",
			o.Defined, plural(o.Defined), termsafe.Line(o.File))
	}
	for _, c := range o.Elsewhere {
		fmt.Fprintf(w, "%s also defines %d server%s: %s\n", c.where(), c.Servers, plural(c.Servers), c.Command())
	}
	if len(o.Copied) > 0 {
		verb := "copied"
		if o.DryRun {
			verb = "would be copied"
		}
		fmt.Fprintf(w, "literal credentials %s as written into %s (private to you, not in the repository; a ${VAR} keeps a value out of files altogether):\n",
			verb, termsafe.Line(o.Target))
		for _, c := range o.Copied {
			parts := make([]string, len(c.Fields))
			for i, f := range c.Fields {
				parts[i] = termsafe.Line(f.Field) + " (or " + termsafe.Line(f.Use) + ")"
			}
			fmt.Fprintf(w, "  %s: %s\n", termsafe.Line(c.Server), strings.Join(parts, ", "))
		}
	}
	if len(o.Disabled) > 0 {
		fmt.Fprintln(w, `Servers disabled in the source stay disabled: remove a name from "disabledMcpServers" in the target to use it.`)
	}
	if len(o.Imported)+len(o.Replaced) > 0 {
		if o.Scope == ScopeUser {
			fmt.Fprintln(w, `Servers in your user file are yours: they need no approval and are usable now (run "mcpward list").`)
		} else {
			fmt.Fprintln(w, `Imported servers are checked like any other: run "mcpward list", then "mcpward approve NAME".`)
		}
	}
}

// reasonText is a mapped finding's reason in words.
func reasonText(reason string) string {
	switch reason {
	case hostconfig.ReasonInputVariable:
		return "was a VS Code ${input:…}"
	case hostconfig.ReasonEnvFileVariable:
		return "named in its envFile"
	case hostconfig.ReasonHeaderEnvDefault:
		return "the header takes it when set and not empty, else the http_headers value, as Codex sends it"
	case hostconfig.ReasonWorkspaceAbsolute:
		return "${workspaceFolder} written as this workspace's path"
	case hostconfig.ReasonWorkspaceRelative:
		return "${workspaceFolder} written relative to the workspace root"
	case hostconfig.ReasonHelperSplit:
		return "the command line written as the argv a shell would run"
	case hostconfig.ReasonExtensionServer:
		return "the server its Gemini CLI extension defines, with this entry's settings over it"
	}
	return reason
}

// hints say, per reason, why a field was dropped or what to do about a
// refused server (text output only; --json carries the reason words).
var hints = map[string]string{
	hostconfig.ReasonInformational:          "changes nothing about what runs",
	hostconfig.ReasonGrantNotHonoured:       "a grant, never honoured",
	hostconfig.ReasonIgnoredBySource:        "the tool itself does not read it",
	hostconfig.ReasonTimeoutUnitUnknown:     "its unit is not known in this format",
	hostconfig.ReasonTimeoutNotCarried:      "mcpward has no per-server place for it",
	hostconfig.ReasonStartupTimeout:         "the connect timeout is the host's",
	hostconfig.ReasonRequiredNotCarried:     "mcpward reports a server that fails and goes on",
	hostconfig.ReasonToolApprovalNotCarried: "approving each call is the host's, not the definition's",
	hostconfig.ReasonDevMode:                "restart-on-change and debugging are the editor's",
	hostconfig.ReasonDroppedByRequest:       "--drop",

	hostconfig.ReasonUnknownField:         "not a field of this tool's format: fix it, or --drop FIELD to import the server without it",
	hostconfig.ReasonDuplicateField:       "a key occurs twice (header names compare ignoring case): keep one",
	hostconfig.ReasonDuplicateName:        "the name occurs twice in the file: keep one",
	hostconfig.ReasonInvalidName:          "no valid name can be made of it: --rename 'OLD=NEW'",
	hostconfig.ReasonNameCollision:        "another server has this name: --rename 'OLD=NEW' picks another",
	hostconfig.ReasonInvalidField:         "the field's value has the wrong type or form",
	hostconfig.ReasonNotObject:            "the entry is not an object",
	hostconfig.ReasonMissingTransport:     "neither a command nor a URL",
	hostconfig.ReasonExtensionOverride:    "it only adjusts a server a Gemini CLI extension defines, and no extension installed here (.gemini/extensions, ~/.gemini/extensions) defines it: install the extension, or import its gemini-extension.json with --file and add this entry's settings to it",
	hostconfig.ReasonAmbiguousTransport:   "both a command and a URL, or two URLs: keep one",
	hostconfig.ReasonUnknownType:          "\"type\" names no transport this tool knows",
	hostconfig.ReasonTransportSSE:         "the legacy HTTP+SSE transport, which mcpward does not speak: use the server's Streamable HTTP URL (often ending in /mcp) if it has one",
	hostconfig.ReasonTransportWS:          "a WebSocket transport, which mcpward does not speak",
	hostconfig.ReasonRemoteEnvironment:    "Codex's remote executor: define the server where mcpward runs it",
	hostconfig.ReasonUnsupportedVariable:  "a ${…} mcpward cannot map: write the value, or ${X} with X set where mcpward runs",
	hostconfig.ReasonInputNotSecret:       "the input is a password: --input 'ID=NAME' must name a credential-shaped variable (…_TOKEN, …_KEY, …_SECRET)",
	hostconfig.ReasonLiteralTemplate:      "this tool passes \"${\" as it is, and mcpward's format has no escape for it",
	hostconfig.ReasonWorkspaceUnknown:     "${workspaceFolder} with no workspace known",
	hostconfig.ReasonWorkspaceNotPortable: "${workspaceFolder} cannot be written relative to the workspace root here: import it with --scope local, which writes this workspace's path",
	hostconfig.ReasonEnvFile:              "the env file cannot be read",
	hostconfig.ReasonEnvFileUnreadable:    "the env file cannot be read, or names a variable mcpward cannot reference: fix it, or list the variables under \"env\" as ${NAME}",
	hostconfig.ReasonOAuthUnsupported:     "a sign-in mcpward's format cannot express (mcpward discovers the authorization server itself; Google credential providers are not supported)",
	hostconfig.ReasonClientSecret:         "an OAuth client secret never lives in a definition: use a public client, or let \"mcpward login NAME\" register one",
	hostconfig.ReasonLiteralBearer:        "a literal token (Codex refuses it too): name a variable with bearer_token_env_var",
	hostconfig.ReasonHelperNotArgv:        "a shell line: write headersHelper as an exact argv, [\"/path/to/helper\", \"arg\"]",
	hostconfig.ReasonSandbox:              "VS Code's sandbox, which mcpward cannot enforce; without it the server could do more",
	ReasonLiteralCredential:               "write it as ${VAR} (set VAR where mcpward runs), or import with --scope local or user",
}

func hint(reason string) string {
	if h, ok := hints[reason]; ok {
		return " — " + h
	}
	return ""
}

// noteText is a note about the file in words.
func noteText(n hostconfig.Note, o JSON) string {
	switch n.Reason {
	case hostconfig.NoteNoServersKey:
		if hostconfig.Format(o.From) == hostconfig.ClaudeCode && o.Scope == ScopeLocal {
			return fmt.Sprintf(`The "projects" entry of this directory in %s has no "mcpServers": Claude Code's local scope here defines no server.`, termsafe.Line(o.File))
		}
		return fmt.Sprintf("%s has no %q: it defines no server.", termsafe.Line(o.File), n.Field)
	case hostconfig.NoteMCPServersKey:
		return fmt.Sprintf(`Read %d server%s from "mcpServers", other tools' key, as VS Code does (it moves them to "servers").`, n.Count, plural(n.Count))
	case hostconfig.NoteSettingsKey:
		return fmt.Sprintf(`Read %d server%s from the settings' "mcp": {"servers"}.`, n.Count, plural(n.Count))
	case hostconfig.NoteNoProject:
		return fmt.Sprintf(`%s has no "projects" entry for this directory: Claude Code's local scope here defines no server.`, termsafe.Line(o.File))
	}
	return ""
}

// where names a file of Elsewhere.
func (c Candidate) where() string {
	if !c.File && hostconfig.Format(c.From) == hostconfig.ClaudeCode {
		if c.Scope == ScopeUser {
			return "Claude Code's user scope (the top-level \"mcpServers\" of " + termsafe.Line(c.Path) + ")"
		}
		return "Claude Code's local scope for this directory (in " + termsafe.Line(c.Path) + ")"
	}
	return termsafe.Line(c.Path)
}

// shellQuote quotes a path for a command line to copy.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(termsafe.Line(s), "'", `'\''`) + "'"
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
