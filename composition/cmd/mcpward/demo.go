package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// demoProject is the demo's project configuration (./.mcp.json): one
// server that needs approval, one refused for its deprecated transport,
// one whose credential variable is not set.
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
	{[]string{"show", "weather"}, "The redacted definition: env and header keys only, never their values."},
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

// demo runs the CLI on a throwaway configuration in a temporary directory,
// isolated from the person's own files and environment, and removes it.
// server, when not "", is the example server's program: the project then
// defines it and the demo approves it, lists its tools and calls them.
func demo(ctx context.Context, e env, server string) int {
	project, steps := demoProject, demoSteps
	if server != "" {
		if !filepath.IsAbs(server) {
			server = filepath.Join(e.cwd, server)
		}
		if st, err := os.Stat(server); err != nil || !st.Mode().IsRegular() {
			fmt.Fprintln(e.stderr, "mcpward: demo: --server must name the built example server program")
			return exitUsage
		}
		project = demoProjectWith(server)
		steps = append(append([]demoStep{}, demoSteps...), exampleSteps...)
	}
	dir, err := os.MkdirTemp("", "mcpward-demo-")
	if err != nil {
		fmt.Fprintln(e.stderr, "mcpward: demo: cannot create a temporary directory")
		return exitFailure
	}
	defer os.RemoveAll(dir)
	ws := filepath.Join(dir, "workspace")
	userDir := filepath.Join(dir, "config", "mcpward")
	for _, f := range []struct{ dir, name, data string }{
		{ws, ".mcp.json", project},
		{userDir, "mcp.json", demoUser},
	} {
		if err := os.MkdirAll(f.dir, 0o700); err != nil || os.WriteFile(filepath.Join(f.dir, f.name), []byte(f.data), 0o600) != nil {
			fmt.Fprintln(e.stderr, "mcpward: demo: cannot write the demo configuration")
			return exitFailure
		}
	}
	vars := map[string]string{
		"HOME":            filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME": filepath.Join(dir, "config"),
		"XDG_STATE_HOME":  filepath.Join(dir, "state"),
	}
	sub := env{
		stdout:      e.stdout,
		stderr:      e.stdout,
		lookup:      func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		cwd:         ws,
		managedPath: filepath.Join(dir, "etc", "managed-mcp.json"),
	}
	fmt.Fprintf(e.stdout, "mcpward demo: a throwaway workspace in %s\n", dir)
	fmt.Fprintf(e.stdout, "with a project file (.mcp.json) and a user file (%s).\n", filepath.Join(userDir, "mcp.json"))
	for _, s := range steps {
		fmt.Fprintf(e.stdout, "\n# %s\n$ mcpward %s\n", strings.ReplaceAll(s.note, "\n", "\n# "), quoteShell(s.args))
		if code := run(ctx, s.args, sub); code != exitOK {
			fmt.Fprintf(e.stderr, "mcpward: demo: %q failed with exit code %d\n", quoteShell(s.args), code)
			return exitFailure
		}
	}
	fmt.Fprintln(e.stdout, "\nNext: put your servers in ./.mcp.json (project) or ~/.config/mcpward/mcp.json (user),\nthen run \"mcpward list\" and \"mcpward doctor\". The demo directory has been removed.")
	return exitOK
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
