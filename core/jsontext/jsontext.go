// Package jsontext writes JSON text byte-identical to encoding/json's
// output, without reflection or allocation beyond the destination slice.
// It imports only the standard library, so core packages and adapters may
// both use it.
package jsontext

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// htmlSafe reports the ASCII bytes encoding/json writes unescaped;
// plainSafe those it writes unescaped with HTML escaping off.
var htmlSafe, plainSafe = func() (h, p [utf8.RuneSelf]bool) {
	for b := range utf8.RuneSelf {
		p[b] = b >= 0x20 && b != '"' && b != '\\'
		h[b] = p[b] && b != '<' && b != '>' && b != '&'
	}
	return h, p
}()

// AppendString appends s to dst as a JSON string exactly as encoding/json
// writes it: <, > and & are escaped, invalid UTF-8 becomes \ufffd, and U+2028 and
// U+2029 are escaped.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s, &htmlSafe) }

// AppendStringNoHTML appends s as AppendString does, but as an
// encoding/json Encoder with SetEscapeHTML(false) writes it: <, > and &
// are kept as they are (the JSON-RPC encoders of the MCP SDK write so).
func AppendStringNoHTML(dst []byte, s string) []byte { return appendString(dst, s, &plainSafe) }

// appendString appends s as a JSON string, writing the ASCII bytes safe
// marks unescaped.
func appendString(dst []byte, s string, safe *[utf8.RuneSelf]bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if safe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
