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

// MaxSchemaBytes bounds the compact JSON a decoded schema (a Go value,
// not a json.RawMessage) is written into before it is narrowed (see
// Narrow and Build). A value decoded from JSON is written at about the
// length of that JSON, so this is twice Discover's default byte bound per
// list kind (DefaultMaxBytes): no schema Discover keeps by default comes
// near it. A host's Go value can stand for far more JSON than it holds in
// memory: one sub-schema value shared under many names is written once
// per name, and a value holding a cycle stands for endless JSON, written
// until the depth limits cut it. Writing stops as soon as it passes the
// bound, so the work on a Go value is bounded by the length of the JSON it
// stands for, and never by more than a small multiple of MaxSchemaBytes.
// A host that raises DiscoverOptions.MaxBytes past it still has decoded
// schemas longer than MaxSchemaBytes refused; a json.RawMessage schema is
// not written this way (its bytes are its JSON, bounded where they were
// received) unless it nests deeper than 128 levels.
const MaxSchemaBytes = 2 * DefaultMaxBytes

// maxFormBytes is MaxSchemaBytes; a test lowers it.
var maxFormBytes = MaxSchemaBytes

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
	// spent is the work done on the current value beyond what buf holds:
	// bytes written and cut off again, object members sorted. With
	// len(buf), it bounds the work (see overBudget).
	spent int
	// over: the current value passed the budget; nothing more is written.
	over bool
	// steps counts the values and schemas entered for the current value
	// (each checks the budget once), for tests to bound.
	steps int
}

// overBudget reports whether the value being written has passed the
// budget (its JSON longer than maxFormBytes, or twice that much more work),
// and latches e.over. Every value and schema the writers enter checks it
// first, so the work on one value is at most a small multiple of
// maxFormBytes whatever the Go value shares or cycles through.
func (e *encoder) overBudget() bool {
	e.steps++
	if !e.over && (len(e.buf) > maxFormBytes || e.spent > 2*maxFormBytes) {
		e.over = true
	}
	return e.over
}

// startValue prepares e for writing the next value into an empty buf.
func (e *encoder) startValue() {
	e.buf, e.spent, e.over, e.steps = e.buf[:0], 0, false, 0
}

// value appends v and reports whether v is encodable: nil, bool, a finite
// float64 or json.Number, string, []any and map[string]any (with valid
// UTF-8 keys) nested at most maxValueDepth deep, written within the
// budget (see overBudget; e.over is set when that is why it is false).
// On false the buffer holds a partial value the caller truncates.
func (e *encoder) value(v any, depth int) bool {
	if depth > maxValueDepth || e.overBudget() {
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
	e.spent += len(m)
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

// notEncodable stands in a schema's form (see formWriter) for a value the
// encoder cannot write. It starts no JSON value, so no keyword check takes
// it for a well-formed value, and the walk never copies it (see
// rnode.invalid and emitRaw): it is an ill-formed keyword value, as the
// value it stands for is.
const notEncodable = '?'

// formWriter writes a decoded schema's canonical form: what
// encoder.value writes for it, which is what canon writes for its JSON,
// so that one walk (rootRaw) narrows decoded and raw schemas alike. Where
// a decoded value holds what JSON cannot (a NaN, a key that is not UTF-8,
// a Go type JSON decoding never makes, nesting past maxValueDepth, a
// cycle), the form stays what the walk needs instead:
//   - a keyword value that cannot be written is notEncodable, and one
//     nested too deep counts its depth from the keyword (a value's bound is
//     its own, not the schema's);
//   - members of a schema object whose names are not UTF-8 are left out,
//     and a properties object holding such a name is notEncodable;
//   - a pattern that is not UTF-8 is notEncodable (decoding never makes
//     one; as written, its bytes would be replaced);
//   - an items array that cannot be written is [] (any array is a tuple);
//   - below a subschema nested past maxSchemaDepth, which the walk never
//     enters, values are written as values.
//
// inexact reports that one of these happened: the form is then not what
// encoder.value writes for the schema. over reports that the form passed
// the budget (see encoder.overBudget): it was cut short, and the schema
// is to be refused, not walked. A formWriter is reused across schemas; it
// is not safe for concurrent use.
type formWriter struct {
	encoder
	inexact bool
}

// form writes the form of the schema v into w.buf.
func (w *formWriter) form(v any) {
	w.startValue()
	w.inexact = false
	w.schema(v, 0, 0)
}

// schema appends the form of the subschema v, at schema depth depth and
// JSON nesting level.
func (w *formWriter) schema(v any, depth, level int) {
	if w.overBudget() {
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		w.anyValue(v, level)
		return
	}
	base := len(w.keys)
	w.spent += len(m)
	for k, v := range m {
		if !utf8.ValidString(k) {
			w.inexact = true
			continue
		}
		w.keys = append(w.keys, member{k, v})
	}
	slices.SortFunc(w.keys[base:], func(a, b member) int { return strings.Compare(a.k, b.k) })
	end := len(w.keys)
	w.buf = append(w.buf, '{')
	for i := base; i < end; i++ {
		if i > base {
			w.buf = append(w.buf, ',')
		}
		k, v := w.keys[i].k, w.keys[i].v
		w.buf = jsontext.AppendString(w.buf, k)
		w.buf = append(w.buf, ':')
		switch {
		case depth > maxSchemaDepth:
			// The walk reads only this node's annotations.
			w.anyValue(v, level+1)
		case k == "properties":
			w.properties(v, depth, level+1)
		case k == "items":
			if _, tuple := v.([]any); tuple {
				if !w.anyValue(v, level+1) && !w.over {
					w.buf = append(w.buf[:len(w.buf)-1], "[]"...)
				}
				break
			}
			w.schema(v, depth+1, level+1)
		case k == "additionalProperties":
			w.schema(v, depth+1, level+1)
		case k == "pattern":
			if s, isStr := v.(string); isStr && !utf8.ValidString(s) {
				w.buf = append(w.buf, notEncodable)
				w.inexact = true
				break
			}
			w.anyValue(v, level+1)
		default:
			w.anyValue(v, level+1)
		}
	}
	w.buf = append(w.buf, '}')
	w.popKeys(base)
}

// properties appends the form of the value v of properties in a schema
// at depth, nested level deep.
func (w *formWriter) properties(v any, depth, level int) {
	props, isMap := v.(map[string]any)
	if !isMap || w.overBudget() {
		w.anyValue(v, level)
		return
	}
	base := w.pushKeys(props)
	if base < 0 {
		w.buf = append(w.buf, notEncodable)
		w.inexact = true
		return
	}
	end := len(w.keys)
	w.buf = append(w.buf, '{')
	for i := base; i < end; i++ {
		if i > base {
			w.buf = append(w.buf, ',')
		}
		w.buf = jsontext.AppendString(w.buf, w.keys[i].k)
		w.buf = append(w.buf, ':')
		w.schema(w.keys[i].v, depth+1, level+1)
	}
	w.buf = append(w.buf, '}')
	w.popKeys(base)
}

// anyValue appends the value v, nested level deep, as encoder.value
// writes it; past maxValueDepth counting from v itself, or when value
// cannot write it, notEncodable (which it reports with false). Past the
// budget it writes nothing more.
func (w *formWriter) anyValue(v any, level int) bool {
	mark := len(w.buf)
	if w.value(v, level) {
		return true
	}
	w.cut(mark)
	w.inexact = true
	if level > 0 && !w.over && w.value(v, 0) {
		return true
	}
	w.cut(mark)
	if !w.over {
		w.buf = append(w.buf, notEncodable)
	}
	return false
}

// cut truncates buf to mark, counting the bytes cut off as spent.
func (w *formWriter) cut(mark int) {
	w.spent += len(w.buf) - mark
	w.buf = w.buf[:mark]
}
