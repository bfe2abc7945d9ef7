// Package termsafe makes text from elsewhere (an MCP server, a
// configuration file) safe to print on a terminal: every character that
// could drive the terminal (control characters, escape sequences) or
// deceive its reader (bidirectional overrides, invisible characters) is
// shown as a visible escape, never passed through.
//
// Every string the CLI prints in text mode that it did not write itself
// goes through Line or Text. The rule is core/textsafe's, which serve
// applies to what it hands its clients too. The functions are pure and
// safe for concurrent use.
package termsafe

import (
	"unicode/utf8"

	"github.com/mcpward/mcpward/core/textsafe"
)

// Line returns s for display inside one line of text: every unsafe
// character (see Unsafe), line breaks included, is replaced by its escape
// (\n, \r, \t, \xHH for the other C0 controls, DEL and bytes that are not
// UTF-8, \uHHHH or \UHHHHHHHH for the other unsafe runes). Safe text is
// returned unchanged. It is textsafe.Line: the CLI, serve and the log
// forwarding follow one rule.
func Line(s string) string { return textsafe.Line(s) }

// Text is Line, except that a plain "\n" is kept: for multi-line text such
// as a tool's result. A "\r" is still escaped, so no line can be rewritten
// from its start. It is textsafe.Text.
func Text(s string) string { return textsafe.Text(s) }

// Unsafe reports whether r must never reach a terminal as itself: the C0
// controls (U+0000–U+001F), DEL, the C1 controls (U+0080–U+009F), the
// line and paragraph separators (U+2028, U+2029), and every format
// character (Unicode category Cf), which covers the bidirectional
// controls, the zero-width characters, the soft hyphen and the tag
// characters. It is textsafe.Unsafe.
func Unsafe(r rune) bool { return textsafe.Unsafe(r) }

// Truncate returns s cut to at most n runes, the last one replaced by "…"
// when s was longer. s should already be safe (Line's output).
func Truncate(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for j := range s {
		if count == n-1 {
			i = j
			break
		}
		count++
	}
	return s[:i] + "…"
}
