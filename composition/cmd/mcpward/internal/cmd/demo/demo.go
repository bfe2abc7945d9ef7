// Package demo is "mcpward demo": a guided run of the CLI on a throwaway
// demo configuration.
package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/jsonout"
)

// Options are demo's inputs.
type Options struct {
	IO *iostreams.IOStreams
	// Factory is the run's factory: its Run runs each step, its Env's Cwd
	// resolves a relative --server, its Clock is handed on.
	Factory *cmdutil.Factory
	JSON    bool
	// Server is --server: the built example server program ("" for none).
	Server string
}

// JSON is demo --json's output.
type JSON struct {
	// Directory is the throwaway directory the demo ran in (removed when
	// it ended).
	Directory string `json:"directory"`
	Steps     []Step `json:"steps"`
	// OK reports that every step exited 0.
	OK bool `json:"ok"`
}

// Step is one command the demo ran with --json.
type Step struct {
	Args     []string        `json:"args"`
	Note     string          `json:"note"`
	ExitCode int             `json:"exit_code"`
	Output   json.RawMessage `json:"output"`
}

// NewCmdDemo returns the demo command; runF, when not nil, replaces Run.
func NewCmdDemo(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:   "demo [--server PATH]",
		Short: "A guided run on a throwaway demo configuration",
		Long: `Run mcpward on a throwaway demo configuration in a temporary directory,
isolated from your own files and environment, explaining each step: list,
approve, list again, show. With --server PATH (the built example server of
this repository's examples/server) the project also defines "example", which
the demo approves, connects, lists the tools of and calls. The directory is
removed at the end. Global flags other than --json do not apply.

With --json: {"directory", "steps" [{"args", "note", "exit_code", "output"
(the step's own --json output)}], "ok"}.`,
		Example: `  $ mcpward demo
  $ mcpward demo --server ./bin/example-server
  $ mcpward demo --json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.Globals.JSON
			if opts.Server != "" {
				if !filepath.IsAbs(opts.Server) {
					opts.Server = filepath.Join(f.Env.Cwd, opts.Server)
				}
				if st, err := os.Stat(opts.Server); err != nil || !st.Mode().IsRegular() {
					return cmdutil.FlagErrorf("demo: --server must name the built example server program")
				}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Server, "server", "", "the built example server program at `PATH` (examples/server)")
	return cmd
}

const demoProject = `{
  "mcpServers": {
    "weather": {
      "command": "weather-mcp",
      "args": ["--units", "metric"],
      "env": {"WEATHER_API_KEY": "${WEATHER_API_KEY:-demo-key}"}
    },
    "legacy-events": {
      "type": "sse",
      "url": "https://events.example.com/sse"
    },
    "notes": {
      "type": "http",
      "url": "https://notes.example.com/mcp",
      "headers": {"Authorization": "Bearer ${NOTES_API_TOKEN}"}
    }
  }
}
`

// demoUser is the demo's user configuration: a server used on the
// person's own trust.
const demoUser = `{
  "mcpServers": {
    "files": {"command": "files-mcp", "args": ["--read-only"]}
  }
}
`

// demoStep is one command the demo runs, with what a newcomer should take
// from it.
type demoStep struct {
	args []string
	note string
}

var demoSteps = []demoStep{
	{[]string{"list"}, "Every server your files define, and whether it may be used. \"files\" comes from\nyour user file, so it is used on your own trust; the project's servers are not."},
	{[]string{"approve", "weather"}, "Approving binds \"weather\" to its exact definition, source file and workspace."},
	{[]string{"list"}, "\"weather\" is now allowed. \"legacy-events\" stays refused (deprecated SSE), and\n\"notes\" stays unresolved until NOTES_API_TOKEN is set."},
	{[]string{"show", "weather"}, "The definition as the file wrote it, credentials masked, and what to check before approving."},
	{[]string{"show", "notes"}, "Why \"notes\" cannot be used, and the fix."},
}

// exampleSteps are the steps added when the demo is given the example
// server (demo --server PATH): approve it, list its tools, call two.
var exampleSteps = []demoStep{
	{[]string{"approve", "example"}, "With --server, the project also defines \"example\", the Go example MCP server\nof this repository, run over stdio. Approve it like any project server."},
	{[]string{"tools", "example"}, "Connect to it and list its tools under their host-facing names (mcp__SERVER__TOOL)."},
	{[]string{"call", "example", "echo", "--args", `{"text":"hello from mcpward"}`}, "Call a tool: the arguments are checked against its schema before they are sent."},
	{[]string{"call", "example", "add", "--args", `{"a":2,"b":3}`, "--json"}, "Another call; --json prints the result as JSON (is_error, truncated, content)."},
}

// demoProjectWith returns demoProject with an "example" stdio server
// running the program at path.
func demoProjectWith(path string) string {
	p, _ := json.Marshal(path)
	return strings.Replace(demoProject, `"mcpServers": {`, `"mcpServers": {
    "example": {"command": `+string(p)+`},`, 1)
}

// Run runs the demo's steps on a throwaway configuration in a temporary
// directory, which it removes at the end.
func Run(ctx context.Context, opts *Options) error {
	project, steps := demoProject, demoSteps
	if opts.Server != "" {
		project = demoProjectWith(opts.Server)
		steps = append(append([]demoStep{}, demoSteps...), exampleSteps...)
	}
	dir, err := os.MkdirTemp("", "mcpward-demo-")
	if err != nil {
		fmt.Fprintln(opts.IO.ErrOut, "mcpward: demo: cannot create a temporary directory")
		return cmdutil.ErrSilent
	}
	defer os.RemoveAll(dir)
	ws := filepath.Join(dir, "workspace")
	userDir := filepath.Join(dir, "config", "mcpward")
	for _, f := range []struct{ dir, name, data string }{
		{ws, ".mcp.json", project},
		{userDir, "mcp.json", demoUser},
	} {
		if err := os.MkdirAll(f.dir, 0o700); err != nil || os.WriteFile(filepath.Join(f.dir, f.name), []byte(f.data), 0o600) != nil {
			fmt.Fprintln(opts.IO.ErrOut, "mcpward: demo: cannot write the demo configuration")
			return cmdutil.ErrSilent
		}
	}
	vars := map[string]string{
		"HOME":            filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME": filepath.Join(dir, "config"),
		"XDG_STATE_HOME":  filepath.Join(dir, "state"),
	}
	env := app.Env{
		Lookup:      func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		Cwd:         ws,
		ManagedPath: filepath.Join(dir, "etc", "managed-mcp.json"),
	}
	// run runs one step on its own factory: its output on out, its
	// progress and errors on errOut.
	run := func(args []string, out, errOut io.Writer) int {
		ios := &iostreams.IOStreams{Out: out, ErrOut: errOut}
		return opts.Factory.Run(ctx, cmdutil.New(ios, env, opts.Factory.Clock), args)
	}
	if opts.JSON {
		doc := JSON{Directory: dir, Steps: []Step{}, OK: true}
		for _, s := range steps {
			args := s.args
			if !slices.Contains(args, "--json") {
				args = append(slices.Clone(args), "--json")
			}
			var buf bytes.Buffer
			code := run(args, &buf, opts.IO.ErrOut)
			doc.Steps = append(doc.Steps, Step{Args: args, Note: s.note, ExitCode: code, Output: rawJSON(buf.Bytes())})
			if code != cmdutil.ExitOK {
				doc.OK = false
				break
			}
		}
		_ = jsonout.Write(opts.IO.Out, doc)
		if !doc.OK {
			return cmdutil.ErrSilent
		}
		return nil
	}
	fmt.Fprintf(opts.IO.Out, "mcpward demo: a throwaway workspace in %s\n", dir)
	fmt.Fprintf(opts.IO.Out, "with a project file (.mcp.json) and a user file (%s).\n", filepath.Join(userDir, "mcp.json"))
	for _, s := range steps {
		fmt.Fprintf(opts.IO.Out, "\n# %s\n$ mcpward %s\n", strings.ReplaceAll(s.note, "\n", "\n# "), quoteShell(s.args))
		if code := run(s.args, opts.IO.Out, opts.IO.Out); code != cmdutil.ExitOK {
			fmt.Fprintf(opts.IO.ErrOut, "mcpward: demo: %q failed with exit code %d\n", quoteShell(s.args), code)
			return cmdutil.ErrSilent
		}
	}
	fmt.Fprintln(opts.IO.Out, "\nNext: put your servers in ./.mcp.json (project) or ~/.config/mcpward/mcp.json (user),\nthen run \"mcpward list\" and \"mcpward doctor\". The demo directory has been removed.")
	return nil
}

// rawJSON is a step's --json output as a JSON value: null when empty, a
// JSON string when it is not JSON.
func rawJSON(b []byte) json.RawMessage {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return json.RawMessage("null")
	case json.Valid(b):
		return json.RawMessage(b)
	}
	s, _ := json.Marshal(string(b))
	return s
}

// quoteShell joins args as a shell would need them typed: an argument
// with characters the shell interprets is single-quoted.
func quoteShell(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`{}[]*?;&|<>()#~!") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			out[i] = a
		}
	}
	return strings.Join(out, " ")
}
