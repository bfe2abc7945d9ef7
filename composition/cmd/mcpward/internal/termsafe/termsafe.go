// Package termsafe makes text from elsewhere (an MCP server, a
// configuration file) safe to print on a terminal: every character that
// could drive the terminal (control characters, escape sequences) or
// deceive its reader (bidirectional overrides, invisible characters) is
// shown as a visible escape, never passed through.
//
// Every string the CLI prints in text mode that it did not write itself
// goes through Line or Text. The functions are pure and safe for
// concurrent use.
package termsafe

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line returns s for display inside one line of text: every unsafe
// character (see Unsafe), line breaks included, is replaced by its escape
// (\n, \r, \t, \xHH for the other C0 controls, DEL and bytes that are not
// UTF-8, \uHHHH or \UHHHHHHHH for the other unsafe runes). Safe text is
// returned unchanged.
func Line(s string) string { return escape(s, false) }

// Text is Line, except that a plain "\n" is kept: for multi-line text such
// as a tool's result. A "\r" is still escaped, so no line can be rewritten
// from its start.
func Text(s string) string { return escape(s, true) }

// Unsafe reports whether r must never reach a terminal as itself: the C0
// controls (U+0000–U+001F), DEL, the C1 controls (U+0080–U+009F), the
// line and paragraph separators (U+2028, U+2029), and every format
// character (Unicode category Cf), which covers the bidirectional
// controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), the
// zero-width characters (U+200B–U+200D, U+2060, U+FEFF), the soft hyphen
// and the tag characters. utf8.RuneError is not unsafe itself; a byte
// that is not UTF-8 is escaped by Line and Text.
func Unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == '\u2028', r == '\u2029':
		return true
	case r < 0xa0:
		return false
	}
	return unicode.Is(unicode.Cf, r)
}

// escape does Line (keepNL false) and Text (keepNL true).
func escape(s string, keepNL bool) string {
	if clean(s, keepNL) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			writeByte(&b, s[i])
		case r == '\n' && keepNL:
			b.WriteByte('\n')
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			writeByte(&b, byte(r))
		case Unsafe(r):
			writeRune(&b, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// clean reports whether s needs no escape.
func clean(s string, keepNL bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			// Slow path for the rest.
			for _, r := range s[i:] {
				if r == utf8.RuneError || Unsafe(r) && !(keepNL && r == '\n') {
					return false
				}
			}
			return true
		}
		if c < 0x20 && !(keepNL && c == '\n') || c == 0x7f {
			return false
		}
	}
	return true
}

const hexDigits = "0123456789abcdef"

// writeByte writes \xHH.
func writeByte(b *strings.Builder, c byte) {
	b.WriteString(`\x`)
	b.WriteByte(hexDigits[c>>4])
	b.WriteByte(hexDigits[c&0xf])
}

// writeRune writes \uHHHH, or \UHHHHHHHH above U+FFFF.
func writeRune(b *strings.Builder, r rune) {
	h := strconv.FormatInt(int64(r), 16)
	if r > 0xffff {
		b.WriteString(`\U`)
		b.WriteString(strings.Repeat("0", 8-len(h)))
	} else {
		b.WriteString(`\u`)
		b.WriteString(strings.Repeat("0", 4-len(h)))
	}
	b.WriteString(h)
}

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
