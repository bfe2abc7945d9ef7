package hostconfig

import (
	"path/filepath"
	"strings"
)

// varSyntax is what a format's host expands in its string values, and so
// how each "$" of a value is carried into our format, whose only syntax
// is ${NAME} and ${NAME:-default} (with no escape for a literal "${").
type varSyntax struct {
	// braces: the host expands ${NAME} (and ${NAME:-default}), kept as is.
	braces bool
	// bare: the host expands $NAME, written ${NAME}.
	bare bool
	// editor: the host expands the editor variables ${env:NAME},
	// ${workspaceFolder}, ${workspaceFolderBasename}, ${userHome},
	// ${pathSeparator} and ${/}; ${input:…} is refused by name.
	editor bool
	// workspace is what ${workspaceFolder} expands to ("" unknown).
	workspace string
}

// isNameStart and isNameByte are our template's NAME grammar,
// [A-Za-z_][A-Za-z0-9_]*.
func isNameStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isNameByte(c byte) bool  { return isNameStart(c) || '0' <= c && c <= '9' }

func isName(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return true
}

// translate carries s into our format, or returns a Reason* word saying
// why it cannot be.
func (v varSyntax) translate(s string) (string, string) {
	if !strings.Contains(s, "$") {
		return s, ""
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 < len(s) && s[i+1] == '{' {
			end := strings.IndexByte(s[i+2:], '}')
			if !v.braces && !v.editor {
				return "", ReasonLiteralTemplate
			}
			if end < 0 {
				return "", ReasonUnsupportedVariable
			}
			inner := s[i+2 : i+2+end]
			out, reason := v.variable(inner)
			if reason != "" {
				return "", reason
			}
			b.WriteString(out)
			i += end + 3
			continue
		}
		if v.bare && i+1 < len(s) && isNameStart(s[i+1]) {
			j := i + 2
			for j < len(s) && isNameByte(s[j]) {
				j++
			}
			b.WriteString("${" + s[i+1:j] + "}")
			i = j
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String(), ""
}

// variable maps the inside of one ${…}.
func (v varSyntax) variable(inner string) (string, string) {
	if v.editor {
		switch {
		case strings.HasPrefix(inner, "env:"):
			if name := inner[len("env:"):]; isName(name) {
				return "${" + name + "}", ""
			}
			return "", ReasonUnsupportedVariable
		case strings.HasPrefix(inner, "input:"):
			return "", ReasonInputVariable
		case inner == "workspaceFolder" || inner == "workspaceFolderBasename":
			if v.workspace == "" {
				return "", ReasonWorkspaceUnknown
			}
			w := v.workspace
			if inner == "workspaceFolderBasename" {
				w = filepath.Base(w)
			}
			if strings.Contains(w, "${") {
				return "", ReasonLiteralTemplate
			}
			return w, ""
		case inner == "userHome":
			return "${HOME}", ""
		case inner == "pathSeparator" || inner == "/":
			return "/", ""
		}
	}
	if v.braces {
		name, def, hasDef := strings.Cut(inner, ":-")
		if isName(name) && (!hasDef || !strings.Contains(def, "${")) {
			return "${" + inner + "}", ""
		}
	}
	return "", ReasonUnsupportedVariable
}

// syntaxOf returns the variable syntax of a format's host.
func syntaxOf(format Format, opts Options) varSyntax {
	switch format {
	case ClaudeCode:
		// Claude Code expands ${VAR} and ${VAR:-default}.
		return varSyntax{braces: true}
	case Cursor, VSCode:
		return varSyntax{editor: true, workspace: opts.Workspace}
	case Gemini:
		// Gemini CLI resolves $VAR and ${VAR} in settings.json strings.
		return varSyntax{braces: true, bare: true}
	}
	// Claude Desktop and Codex expand nothing.
	return varSyntax{}
}
