package importcmd

import (
	"github.com/mcpward/mcpward/adapters/hostconfig"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
)

// Candidate is another host's configuration file, at the default location
// import reads, that defines servers mcpward does not read: what "mcpward
// doctor" suggests importing.
type Candidate struct {
	// From is the tool (a hostconfig.Format) and Scope the scope to name
	// with --scope: the one matching the file's own (user for a file of
	// every workspace, local for Claude Code's entry of this workspace,
	// project for a workspace's file), which also selects the file read.
	From, Scope string
	// Path is the file.
	Path string
	// Servers is how many servers the file defines (those import would
	// refuse included).
	Servers int
}

// Command is the import command line that reads the candidate.
func (c Candidate) Command() string {
	return "mcpward import --from " + c.From + " --scope " + c.Scope
}

// detectOrder is every file Detect looks at, in the order it reports
// them: the tool and the scope that reads it.
var detectOrder = []struct {
	from  hostconfig.Format
	scope string
}{
	{hostconfig.ClaudeCode, ScopeUser},
	{hostconfig.ClaudeCode, ScopeLocal},
	{hostconfig.ClaudeDesktop, ScopeUser},
	{hostconfig.Cursor, ScopeUser},
	{hostconfig.Cursor, ScopeProject},
	{hostconfig.VSCode, ScopeProject},
	{hostconfig.Codex, ScopeUser},
	{hostconfig.Gemini, ScopeUser},
	{hostconfig.Gemini, ScopeProject},
}

// Detect returns the other hosts' files, at the default locations import
// reads (see sourcePath), that exist and define at least one server, in a
// fixed order. Each file is read once (at most maxSourceBytes; a larger,
// unreadable or malformed one is left out, as import would fail on it)
// and decoded only to count its servers: a Candidate holds no value from
// the file. The same file reached twice (the working directory is HOME)
// is reported once.
func Detect(e app.Env) []Candidate {
	type read struct {
		data []byte
		ok   bool
	}
	files := map[string]read{}
	seen := map[string]bool{}
	var out []Candidate
	for _, d := range detectOrder {
		path := sourcePath(string(d.from), d.scope, e)
		if path == "" {
			continue
		}
		key := string(d.from) + "\x00" + d.scope + "\x00" + path
		if d.from != hostconfig.ClaudeCode {
			// Only Claude Code's two scopes read two parts of one file.
			key = string(d.from) + "\x00" + path
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		f, ok := files[path]
		if !ok {
			data, err := readSource(path)
			f = read{data, err == nil}
			files[path] = f
		}
		if !f.ok {
			continue
		}
		res, err := hostconfig.Decode(d.from, f.data, hostconfig.Options{Workspace: e.Cwd, Local: d.scope == ScopeLocal})
		if err != nil {
			continue
		}
		n := len(res.Servers)
		for _, fd := range res.Findings {
			if fd.Kind == hostconfig.FindingRefused {
				n++
			}
		}
		if n > 0 {
			out = append(out, Candidate{From: string(d.from), Scope: d.scope, Path: path, Servers: n})
		}
	}
	return out
}
