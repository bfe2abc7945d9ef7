package catalog

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpward/mcpward/core/jsontext"
)

// maxValueDepth bounds the nesting of a JSON value (enum, const, default,
// examples) the encoder writes; deeper values, and cyclic Go values a
// caller may pass to Narrow, are not encodable.
const maxValueDepth = 128

// appendFloat appends a finite f exactly as encoding/json writes a float64.
func appendFloat(dst []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// Clean up e-09 to e-9.
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// appendNumber is appendFloat with a fast path for the small integers
// schemas are full of.
func appendNumber(dst []byte, f float64) []byte {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 && (f != 0 || !math.Signbit(f)) {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return appendFloat(dst, f)
}

// number returns the value of a JSON number decoded into an any (a
// float64, or a json.Number with Decoder.UseNumber), and whether v is a
// finite one. strconv.ParseFloat also reads "NaN" and "Inf", which are no
// JSON numbers: such a json.Number is not one.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, !math.IsNaN(n) && !math.IsInf(n, 0)
	case json.Number:
		f, err := strconv.ParseFloat(string(n), 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return 0, false
}

// encoder writes compact JSON with sorted object keys from values decoded
// by encoding/json into an any, without reflection. It reuses its buffers
// across values.
type encoder struct {
	buf []byte
	// keys is a stack of object members being sorted; each object uses
	// the part above what its parents use.
	keys []member
}

// value appends v and reports whether v is encodable: nil, bool, a finite
// float64 or json.Number, string, []any and map[string]any (with valid
// UTF-8 keys) nested at most maxValueDepth deep. On false the buffer holds
// a partial value the caller truncates.
func (e *encoder) value(v any, depth int) bool {
	if depth > maxValueDepth {
		return false
	}
	switch x := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case bool:
		e.buf = strconv.AppendBool(e.buf, x)
	case float64, json.Number:
		f, ok := number(x)
		if !ok {
			return false
		}
		e.buf = appendNumber(e.buf, f)
	case string:
		e.buf = jsontext.AppendString(e.buf, x)
	case []any:
		e.buf = append(e.buf, '[')
		for i, el := range x {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if !e.value(el, depth+1) {
				return false
			}
		}
		e.buf = append(e.buf, ']')
	case map[string]any:
		base := e.pushKeys(x)
		if base < 0 {
			return false
		}
		end := len(e.keys)
		e.buf = append(e.buf, '{')
		for i := base; i < end; i++ {
			if i > base {
				e.buf = append(e.buf, ',')
			}
			m := e.keys[i]
			e.buf = jsontext.AppendString(e.buf, m.k)
			e.buf = append(e.buf, ':')
			if !e.value(m.v, depth+1) {
				e.popKeys(base)
				return false
			}
		}
		e.buf = append(e.buf, '}')
		e.popKeys(base)
	default:
		return false
	}
	return true
}

// popKeys pops the key stack down to base, dropping the references.
func (e *encoder) popKeys(base int) {
	clear(e.keys[base:])
	e.keys = e.keys[:base]
}

// member is one member of an object.
type member struct {
	k string
	v any
}

// pushKeys pushes m's members, sorted by key, onto the key stack and
// returns where they start, or -1 (pushing nothing) when a key is not
// valid UTF-8: such keys would encode to the same text as other keys.
func (e *encoder) pushKeys(m map[string]any) int {
	base := len(e.keys)
	for k, v := range m {
		if !utf8.ValidString(k) {
			e.popKeys(base)
			return -1
		}
		e.keys = append(e.keys, member{k, v})
	}
	slices.SortFunc(e.keys[base:], func(a, b member) int { return strings.Compare(a.k, b.k) })
	return base
}
