package serve

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Hosts are the hosts --print-config knows, in the order help lists
// them.
var Hosts = []string{"claude-desktop", "claude-code", "cursor", "vscode"}

// TokenEnv is the environment variable the printed HTTP entries of
// claude-code and cursor read the token from (the entry never holds it).
const TokenEnv = "MCPWARD_TOKEN"

// entryName is the server name of the printed entries.
const entryName = "mcpward"

// ClientEntry is the configuration entry of host for a client of serve:
// over stdio (url "") one that starts program with args; over HTTP one
// that posts to url with "Authorization: Bearer TOKEN", TOKEN read from
// where the host can read it (TokenEnv, or VS Code's password prompt) —
// never the token itself. It returns the JSON to paste, indented, and the
// lines that say where it goes and how the token reaches the host. A
// host it does not know, and claude-desktop over HTTP (Claude Desktop
// starts its local servers as commands), are an error.
func ClientEntry(host, program string, args []string, url, tokenFile string) (string, []string, error) {
	if !slices.Contains(Hosts, host) {
		return "", nil, fmt.Errorf("--print-config: want one of %s", strings.Join(Hosts, ", "))
	}
	bearer := "Bearer ${" + TokenEnv + "}"
	setEnv := fmt.Sprintf("set %s to the token in the environment the host starts with: export %s=\"$(cat %s)\"", TokenEnv, TokenEnv, shellLine([]string{tokenFile}))
	var v any
	var notes []string
	switch {
	case url == "" && host == "vscode":
		v = map[string]any{"servers": map[string]any{entryName: map[string]any{"type": "stdio", "command": program, "args": args}}}
		notes = []string{"paste into .vscode/mcp.json of the workspace (or the user mcp.json: MCP: Open User Configuration)"}
	case url == "" && host == "claude-code":
		v = map[string]any{"mcpServers": map[string]any{entryName: map[string]any{"type": "stdio", "command": program, "args": args}}}
		words := []string{"claude", "mcp", "add", "--scope", "user", entryName, "--", program}
		notes = []string{"paste into .mcp.json of the project, or run: " + shellLine(append(words, args...))}
	case url == "":
		v = map[string]any{"mcpServers": map[string]any{entryName: map[string]any{"command": program, "args": args}}}
		where := "~/.cursor/mcp.json (or .cursor/mcp.json of the project)"
		if host == "claude-desktop" {
			where = "claude_desktop_config.json (Settings > Developer > Edit Config), then restart Claude Desktop"
		}
		notes = []string{"paste into " + where}
	case host == "claude-desktop":
		return "", nil, fmt.Errorf("--print-config claude-desktop: Claude Desktop starts its local servers as commands: drop --http for its entry")
	case host == "claude-code":
		v = map[string]any{"mcpServers": map[string]any{entryName: map[string]any{"type": "http", "url": url,
			"headers": map[string]string{"Authorization": bearer}}}}
		notes = []string{"paste into .mcp.json of the project", setEnv,
			fmt.Sprintf("or, without the variable: claude mcp add --transport http %s %s --header \"Authorization: Bearer $(cat %s)\"", entryName, url, shellLine([]string{tokenFile}))}
	case host == "cursor":
		v = map[string]any{"mcpServers": map[string]any{entryName: map[string]any{"url": url,
			"headers": map[string]string{"Authorization": "Bearer ${env:" + TokenEnv + "}"}}}}
		notes = []string{"paste into ~/.cursor/mcp.json (or .cursor/mcp.json of the project)", setEnv}
	default: // vscode
		v = map[string]any{
			"inputs": []map[string]any{{"type": "promptString", "id": "mcpward-token", "password": true,
				"description": "mcpward serve's token (the content of " + tokenFile + ")"}},
			"servers": map[string]any{entryName: map[string]any{"type": "http", "url": url,
				"headers": map[string]string{"Authorization": "Bearer ${input:mcpward-token}"}}}}
		notes = []string{"paste into .vscode/mcp.json of the workspace; VS Code asks for the token once: the content of " + tokenFile}
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", nil, err
	}
	return string(b) + "\n", notes, nil
}

// shellLine is words as one POSIX shell line: a word of other than
// letters, digits and -_./:=@ is single-quoted.
func shellLine(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		plain := w != ""
		for _, r := range w {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@", r)) {
				plain = false
				break
			}
		}
		if plain {
			out[i] = w
		} else {
			out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}
