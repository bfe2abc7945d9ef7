package definition

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// This file holds Decode's JSON parser: a strict, single-pass,
// recursive-descent scanner over the document's bytes that builds the
// decodeValue tree (see decode.go) directly.
//
// It accepts exactly what encoding/json accepts (RFC 8259: the literals,
// the number grammar, strings without raw control characters and with
// only the escapes \" \\ \/ \b \f \n \r \t \uXXXX, whitespace of space,
// tab, CR and LF only, one value and nothing after it but whitespace,
// nesting at most 10000 deep), and produces the same values: a string is
// unescaped exactly as encoding/json unescapes it (a lone or mismatched
// UTF-16 surrogate becomes U+FFFD) and a number keeps its literal text,
// as json.Number does. UTF-8 validity is checked over the whole document
// before scanning, as before. FuzzDecodeScan checks all of this against
// encoding/json.
//
// Speed comes from three things: the document is copied into one string
// once and every key and string value without escapes is a substring of
// it (no allocation per string); values are allocated from slabs; and the
// members and elements of an object or array are gathered on a shared
// scratch stack and copied once into an exactly sized slice when the
// object or array closes.

// decodeSlabSize is how many values one slab holds at most. A slab is
// sized to what is left of the document's bound on its values
// (decodeValueBound), so a one-server document takes one slab of a few
// values, not 256 (18 KB, most of a small document's evaluation).
const decodeSlabSize = 256

// decodeValueBound is an upper bound on the number of values in the JSON
// document s: the root, an object member's value after each ':', and an
// array element after each '[' or ','. A ':', ',' or '[' inside a string,
// a ',' between members and an empty array's '[' only add to it.
func decodeValueBound(s string) int {
	return 1 + strings.Count(s, ":") + strings.Count(s, ",") + strings.Count(s, "[")
}

// decodeScanner is the state of one parse.
type decodeScanner struct {
	// s is the whole document; i is the offset of the next byte to read.
	s string
	i int
	// slab is the current value slab; values are appended to it until it
	// is full, then a new one is started, so pointers stay valid.
	slab []decodeValue
	// left is how many values the document may still hold beyond the
	// current slab (decodeValueBound less the slabs made so far).
	left int
	// members and elems are scratch stacks shared by every nesting level.
	members []decodeMember
	elems   []*decodeValue
}

// decodeParse parses data as exactly one JSON value in valid UTF-8.
func decodeParse(data []byte) (*decodeValue, bool) {
	if !utf8.Valid(data) {
		return nil, false
	}
	sc := decodeScanner{s: string(data)}
	sc.left = decodeValueBound(sc.s)
	sc.skipSpace()
	v, ok := sc.value(0)
	if !ok {
		return nil, false
	}
	sc.skipSpace()
	if sc.i != len(sc.s) {
		return nil, false
	}
	return v, true
}

// alloc returns a new value holding v, taken from the current slab.
func (sc *decodeScanner) alloc(v decodeValue) *decodeValue {
	if len(sc.slab) == cap(sc.slab) {
		n := min(sc.left, decodeSlabSize)
		if n < 1 {
			// Not reached while decodeValueBound holds (FuzzDecodeScan
			// checks it); a slab must never be appended past its capacity.
			n = decodeSlabSize
		}
		sc.left -= n
		sc.slab = make([]decodeValue, 0, n)
	}
	sc.slab = append(sc.slab, v)
	return &sc.slab[len(sc.slab)-1]
}

// skipSpace skips JSON whitespace.
func (sc *decodeScanner) skipSpace() {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

// value parses one value starting at sc.i (whitespace already skipped).
// depth is the number of objects and arrays enclosing it.
func (sc *decodeScanner) value(depth int) (*decodeValue, bool) {
	if sc.i >= len(sc.s) {
		return nil, false
	}
	switch c := sc.s[sc.i]; c {
	case '{':
		if depth >= decodeMaxDepth {
			return nil, false
		}
		return sc.object(depth)
	case '[':
		if depth >= decodeMaxDepth {
			return nil, false
		}
		return sc.array(depth)
	case '"':
		str, ok := sc.str()
		if !ok {
			return nil, false
		}
		return sc.alloc(decodeValue{kind: decodeString, str: str}), true
	case 't':
		if !sc.literal("true") {
			return nil, false
		}
		return sc.alloc(decodeValue{kind: decodeBool, b: true}), true
	case 'f':
		if !sc.literal("false") {
			return nil, false
		}
		return sc.alloc(decodeValue{kind: decodeBool}), true
	case 'n':
		if !sc.literal("null") {
			return nil, false
		}
		return sc.alloc(decodeValue{kind: decodeNull}), true
	default:
		if c == '-' || '0' <= c && c <= '9' {
			num, ok := sc.number()
			if !ok {
				return nil, false
			}
			return sc.alloc(decodeValue{kind: decodeNumber, str: num}), true
		}
		return nil, false
	}
}

// object parses an object; sc.i is at its '{'.
func (sc *decodeScanner) object(depth int) (*decodeValue, bool) {
	sc.i++
	base := len(sc.members)
	sc.skipSpace()
	if sc.i < len(sc.s) && sc.s[sc.i] == '}' {
		sc.i++
		return sc.alloc(decodeValue{kind: decodeObject}), true
	}
	for {
		if sc.i >= len(sc.s) || sc.s[sc.i] != '"' {
			return nil, false
		}
		key, ok := sc.str()
		if !ok {
			return nil, false
		}
		sc.skipSpace()
		if sc.i >= len(sc.s) || sc.s[sc.i] != ':' {
			return nil, false
		}
		sc.i++
		sc.skipSpace()
		val, ok := sc.value(depth + 1)
		if !ok {
			return nil, false
		}
		sc.members = append(sc.members, decodeMember{key: key, val: val})
		sc.skipSpace()
		if sc.i >= len(sc.s) {
			return nil, false
		}
		switch sc.s[sc.i] {
		case ',':
			sc.i++
			sc.skipSpace()
		case '}':
			sc.i++
			members := make([]decodeMember, len(sc.members)-base)
			copy(members, sc.members[base:])
			clear(sc.members[base:]) // drop references held by the scratch stack
			sc.members = sc.members[:base]
			return sc.alloc(decodeValue{kind: decodeObject, members: members}), true
		default:
			return nil, false
		}
	}
}

// array parses an array; sc.i is at its '['.
func (sc *decodeScanner) array(depth int) (*decodeValue, bool) {
	sc.i++
	base := len(sc.elems)
	sc.skipSpace()
	if sc.i < len(sc.s) && sc.s[sc.i] == ']' {
		sc.i++
		return sc.alloc(decodeValue{kind: decodeArray}), true
	}
	for {
		e, ok := sc.value(depth + 1)
		if !ok {
			return nil, false
		}
		sc.elems = append(sc.elems, e)
		sc.skipSpace()
		if sc.i >= len(sc.s) {
			return nil, false
		}
		switch sc.s[sc.i] {
		case ',':
			sc.i++
			sc.skipSpace()
		case ']':
			sc.i++
			elems := make([]*decodeValue, len(sc.elems)-base)
			copy(elems, sc.elems[base:])
			clear(sc.elems[base:])
			sc.elems = sc.elems[:base]
			return sc.alloc(decodeValue{kind: decodeArray, elems: elems}), true
		default:
			return nil, false
		}
	}
}

// literal consumes word (true, false or null) at sc.i.
func (sc *decodeScanner) literal(word string) bool {
	if len(sc.s)-sc.i < len(word) || sc.s[sc.i:sc.i+len(word)] != word {
		return false
	}
	sc.i += len(word)
	return true
}

// number consumes a number literal at sc.i and returns its text:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (sc *decodeScanner) number() (string, bool) {
	s, start := sc.s, sc.i
	i := start
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i = decodeDigits(s, i+1)
	default:
		return "", false
	}
	if i < len(s) && s[i] == '.' {
		j := decodeDigits(s, i+1)
		if j == i+1 {
			return "", false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := decodeDigits(s, i)
		if j == i {
			return "", false
		}
		i = j
	}
	sc.i = i
	return s[start:i], true
}

// decodeDigits returns the offset of the first non-digit at or after i.
func decodeDigits(s string, i int) int {
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// str consumes a string literal at sc.i (which is at its opening quote)
// and returns its value. A string without escapes is returned as a
// substring of the document.
func (sc *decodeScanner) str() (string, bool) {
	s := sc.s
	start := sc.i + 1
	escaped := false
	for i := start; i < len(s); {
		switch c := s[i]; {
		case c == '"':
			sc.i = i + 1
			if !escaped {
				return s[start:i], true
			}
			return decodeUnescape(s[start:i]), true
		case c == '\\':
			if i+1 >= len(s) {
				return "", false
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if decodeHex4(s, i+2) < 0 {
					return "", false
				}
				i += 6
			default:
				return "", false
			}
			escaped = true
		case c < 0x20:
			return "", false
		default:
			i++
		}
	}
	return "", false
}

// decodeHex4 returns the value of the four hex digits at s[i:], or -1.
func decodeHex4(s string, i int) rune {
	if len(s)-i < 4 {
		return -1
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// decodeUnescape returns the value of the body of a string literal that
// str has already validated and that holds at least one escape. It follows
// encoding/json exactly: a \uXXXX surrogate that does not start a valid
// pair with an immediately following \uXXXX becomes U+FFFD.
func decodeUnescape(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			b = append(b, c)
			i++
			continue
		}
		switch e := s[i+1]; e {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r := decodeHex4(s, i+2)
			i += 6
			if utf16.IsSurrogate(r) {
				var r1 rune = -1
				if len(s)-i >= 6 && s[i] == '\\' && s[i+1] == 'u' {
					r1 = decodeHex4(s, i+2)
				}
				if dec := utf16.DecodeRune(r, r1); dec != unicode.ReplacementChar {
					i += 6
					b = utf8.AppendRune(b, dec)
					continue
				}
				r = unicode.ReplacementChar
			}
			b = utf8.AppendRune(b, r)
			continue
		default: // '"', '\\', '/'
			b = append(b, e)
		}
		i += 2
	}
	return string(b)
}
