// Package jsonout is the one exporter of the CLI's --json output: indented
// JSON in which every character that could drive or deceive a terminal is
// a JSON escape, so the output is exact (it decodes to the same values)
// and safe to show raw.
package jsonout

import (
	"bytes"
	"encoding/json"
	"io"
	"unicode/utf8"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
)

// Write writes v as indented JSON (two spaces) and a newline to w, made
// terminal-safe by Escape.
func Write(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(Escape(buf.Bytes()))
	return err
}

// Escape returns the JSON text b with every rune termsafe.Unsafe reports
// (C1 controls, DEL, bidirectional, format and zero-width characters,
// U+2028 and U+2029) written as a \uXXXX escape (a surrogate pair above
// U+FFFF), and every byte that is not UTF-8 as \ufffd. Such runes and
// bytes can only sit inside strings of valid JSON, where the escapes mean
// the same; the C0 controls are left alone (outside strings they are
// whitespace, and encoding/json already escapes them inside).
func Escape(b []byte) []byte {
	clean := true
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 || r >= 0x20 && termsafe.Unsafe(r) {
			clean = false
			break
		}
		i += size
	}
	if clean {
		return b
	}
	out := make([]byte, 0, len(b)+32)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			out = append(out, `\ufffd`...)
		case r >= 0x20 && termsafe.Unsafe(r):
			if r > 0xffff {
				r -= 0x10000
				out = appendU(out, 0xd800+(r>>10))
				out = appendU(out, 0xdc00+(r&0x3ff))
			} else {
				out = appendU(out, r)
			}
		default:
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

const hexDigits = "0123456789abcdef"

func appendU(out []byte, r rune) []byte {
	return append(out, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}
