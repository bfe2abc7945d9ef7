package main

import (
	"context"
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

// demo runs the CLI on a throwaway configuration in a temporary directory,
// isolated from the person's own files and environment, and removes it.
func demo(ctx context.Context, e env) int {
	dir, err := os.MkdirTemp("", "mcpward-demo-")
	if err != nil {
		fmt.Fprintln(e.stderr, "mcpward: demo: cannot create a temporary directory")
		return exitFailure
	}
	defer os.RemoveAll(dir)
	ws := filepath.Join(dir, "workspace")
	userDir := filepath.Join(dir, "config", "mcpward")
	for _, f := range []struct{ dir, name, data string }{
		{ws, ".mcp.json", demoProject},
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
	for _, s := range demoSteps {
		fmt.Fprintf(e.stdout, "\n# %s\n$ mcpward %s\n", strings.ReplaceAll(s.note, "\n", "\n# "), strings.Join(s.args, " "))
		if code := run(ctx, s.args, sub); code != exitOK {
			fmt.Fprintf(e.stderr, "mcpward: demo: %q failed with exit code %d\n", strings.Join(s.args, " "), code)
			return exitFailure
		}
	}
	fmt.Fprintln(e.stdout, "\nNext: put your servers in ./.mcp.json (project) or ~/.config/mcpward/mcp.json (user),\nthen run \"mcpward list\" and \"mcpward doctor\". The demo directory has been removed.")
	return exitOK
}
