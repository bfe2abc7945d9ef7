// Package textsafe is mcpward's one rule for text it did not write (from an
// MCP server, a configuration file, a project) that it shows to a person
// or hands to another program's user: every character that could drive a
// terminal (C0 and C1 controls, and so escape sequences such as OSC 52
// clipboard writes) or deceive a reader (bidirectional controls,
// zero-width and other invisible format characters, line and paragraph
// separators) is replaced by a visible escape, never passed through; and
// text longer than its place is cut with a visible marker.
//
// The CLI prints through it (composition/cmd/mcpward/internal/termsafe),
// serve hands the names, titles and descriptions of the servers it fronts
// to its clients through it (adapters/mcpsession/mcpserve), and the
// servers' log messages are cleaned by the same Unsafe predicate. Every
// function is pure and safe for concurrent use.
package textsafe

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Unsafe reports whether r must never reach a reader as itself: the C0
// controls (U+0000–U+001F), DEL, the C1 controls (U+0080–U+009F), the line
// and paragraph separators (U+2028, U+2029), and every format character
// (Unicode category Cf), which covers the bidirectional controls (U+061C,
// U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), the zero-width characters
// (U+200B–U+200D, U+2060, U+FEFF), the soft hyphen and the tag characters.
// utf8.RuneError is not unsafe itself; a byte that is not UTF-8 is escaped
// by Line and Text.
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

// Line returns s for one line of text: every unsafe character, line breaks
// included, is replaced by its escape (\n, \r, \t; \xHH for the other C0
// controls, DEL and bytes that are not UTF-8; \uHHHH or \UHHHHHHHH for the
// other unsafe runes). Safe text is returned unchanged (no copy).
func Line(s string) string { return escape(s, false) }

// Text is Line, except that a plain "\n" is kept: for text of many lines
// (a description, a tool's result). A "\r" is still escaped, so no line
// can be rewritten from its start.
func Text(s string) string { return escape(s, true) }

// Safe reports whether s is returned unchanged by Text (keepNL) or Line.
func Safe(s string, keepNL bool) bool { return clean(s, keepNL) }

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
			for j := i; j < len(s); {
				r, size := utf8.DecodeRuneInString(s[j:])
				if r == utf8.RuneError && size <= 1 || Unsafe(r) && !(keepNL && r == '\n') {
					return false
				}
				j += size
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

// MinClip is the smallest limit Clip honours: room for its marker and a
// little text.
const MinClip = 64

// Clip returns s when it is at most limit bytes, else its longest start
// that ends on a character boundary followed by the marker
// "…[cut by mcpward: N bytes in all]" (N is len(s)), the whole at most
// limit bytes. A limit below MinClip counts as MinClip. Clip adds no
// unsafe character: the clip of safe text is safe.
func Clip(s string, limit int) string { return clip(s, limit, len(s)) }

// Fit returns s under the rule — Text when keepNL, else Line — and cut as
// Clip cuts, except that the marker's N is len(s), the length of the text
// as given (what its author wrote), not of its escaped form.
func Fit(s string, limit int, keepNL bool) string {
	return clip(escape(s, keepNL), limit, len(s))
}

// clip is Clip with the marker naming total.
func clip(s string, limit, total int) string {
	limit = max(limit, MinClip)
	if len(s) <= limit {
		return s
	}
	marker := "…[cut by mcpward: " + strconv.Itoa(total) + " bytes in all]"
	k := limit - len(marker)
	for k > 0 && !utf8.RuneStart(s[k]) {
		k--
	}
	return s[:k] + marker
}
