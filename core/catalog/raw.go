package catalog

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/mcpward/mcpward/core/jsontext"
)

// A schema of a ports.ToolItem may be a json.RawMessage: the JSON value as
// the server sent it. Build, Discover and Narrow treat it exactly as the
// value encoding/json's Unmarshal decodes from it into an any, without
// building that value: the bytes are first rewritten into their canonical
// form (see canon), the compact JSON, with sorted keys, that the encoder
// writes for the decoded value; narrowing, the as-written form, the
// object check and the byte bound's accounting then read those bytes.

// Outcomes of canon.run.
const (
	// rawOK: the canonical form is in canon.out.
	rawOK = iota
	// rawRefused: Unmarshal refuses the bytes (not one JSON value, a
	// number out of float64's range, nesting past its limit).
	rawRefused
	// rawDeep: the value is nested deeper than maxValueDepth, so it has
	// no as-written form; it was decoded instead (see canon.takeTree).
	rawDeep
)

// canon rewrites one raw JSON value into its canonical form: what
// encoder.value writes for the value Unmarshal decodes from it (duplicate
// member names collapse to the last, member names and strings are decoded
// and written again, numbers become float64s written by appendNumber,
// whitespace goes). It also counts the value's valueSize. A canon is
// reused across values; it is not safe for concurrent use.
type canon struct {
	out []byte
	// mem is the stack of the members of the objects being rewritten.
	mem []rmember
	// keys holds the member names that needed decoding.
	keys []byte
	// size is valueSize of the decoded value.
	size int64
	// bad: a number out of range; deep: nesting over maxValueDepth.
	bad, deep bool
	// tree is the decoded value after run returned rawDeep (see takeTree).
	tree any
}

// takeTree returns the value run decoded, and forgets it.
func (c *canon) takeTree() any {
	v := c.tree
	c.tree = nil
	return v
}

// rmember is one member of an object being rewritten: its decoded name,
// and where it was written in out ([ks, ve), the value from vs).
type rmember struct {
	key        []byte
	ks, vs, ve int
	// size is what the member adds to valueSize.
	size int64
}

var canons = sync.Pool{New: func() any { return new(canon) }}

// run rewrites b and returns rawOK, rawRefused or rawDeep.
func (c *canon) run(b []byte) int {
	c.out, c.mem, c.keys, c.size, c.bad, c.deep = c.out[:0], c.mem[:0], c.keys[:0], 0, false, false
	i := c.value(b, jsontext.SkipSpace(b, 0), 0)
	switch {
	case c.deep:
		v, ok := rawTree(b)
		if !ok {
			return rawRefused
		}
		c.tree = v
		return rawDeep
	case i < 0 || jsontext.SkipSpace(b, i) != len(b):
		return rawRefused
	}
	return rawOK
}

// value rewrites the JSON value at b[i] and returns its end, or -1: the
// bytes are not a JSON value there (syntax as encoding/json's scanner
// checks it) or hold a number out of range, or (c.deep set) the value is
// nested deeper than maxValueDepth.
func (c *canon) value(b []byte, i, depth int) int {
	if depth > maxValueDepth {
		c.deep = true
		return -1
	}
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end, simple := scanString(b, i)
		if end < 0 {
			return -1
		}
		if simple || plain(b[i+1:end-1]) {
			c.out = append(c.out, b[i:end]...)
			c.size += int64(end - i)
		} else {
			d := decodeString(b[i:end])
			c.out = jsontext.AppendString(c.out, d)
			c.size += 2 + int64(len(d))
		}
		return end
	case 't':
		return c.literal(b, i, "true", 5)
	case 'f':
		return c.literal(b, i, "false", 5)
	case 'n':
		return c.literal(b, i, "null", 4)
	case '[':
		c.out = append(c.out, '[')
		c.size += 2
		i = jsontext.SkipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			c.out = append(c.out, ']')
			return i + 1
		}
		for {
			c.size++
			if i = c.value(b, i, depth+1); i < 0 {
				return -1
			}
			if i = jsontext.SkipSpace(b, i); i >= len(b) {
				return -1
			}
			switch b[i] {
			case ',':
				c.out = append(c.out, ',')
				i = jsontext.SkipSpace(b, i+1)
				continue
			case ']':
				c.out = append(c.out, ']')
				return i + 1
			}
			return -1
		}
	case '{':
		return c.object(b, i, depth)
	}
	return c.number(b, i)
}

// literal rewrites the literal lit (true, false, null) at b[i], which
// adds size to valueSize.
func (c *canon) literal(b []byte, i int, lit string, size int64) int {
	end := i + len(lit)
	if end > len(b) || string(b[i:end]) != lit {
		return -1
	}
	c.out = append(c.out, lit...)
	c.size += size
	return end
}

// scanString returns the end of the JSON string literal at b[i], or -1
// when there is none (an unescaped control character, a bad escape, no
// closing quote), and whether its body is all printable ASCII that
// needs no escape (so it is its own canonical form).
func scanString(b []byte, i int) (end int, simple bool) {
	simple = true
	for j := i + 1; j < len(b); j++ {
		switch x := b[j]; {
		case x == '"':
			return j + 1, simple
		case x < 0x20:
			return -1, false
		case x == '\\':
			simple = false
			j++
			if j >= len(b) {
				return -1, false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) {
					return -1, false
				}
				for _, h := range b[j+1 : j+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return -1, false
					}
				}
				j += 4
			default:
				return -1, false
			}
		case x >= utf8.RuneSelf || x == '<' || x == '>' || x == '&':
			simple = false
		}
	}
	return -1, false
}

// number rewrites the number at b[i] as appendNumber writes its float64.
func (c *canon) number(b []byte, i int) int {
	end := numberEnd(b, i)
	if end < 0 {
		return -1
	}
	c.size += sizeNumber
	if lit := b[i:end]; smallInt(lit) {
		c.out = append(c.out, lit...)
		return end
	}
	f, err := strconv.ParseFloat(string(b[i:end]), 64)
	if err != nil {
		c.bad = true
		return -1
	}
	c.out = appendNumber(c.out, f)
	return end
}

// numberEnd returns the end of the JSON number at b[i], or -1 when there
// is none: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func numberEnd(b []byte, i int) int {
	digits := func(j int) int {
		k := j
		for k < len(b) && b[k] >= '0' && b[k] <= '9' {
			k++
		}
		if k == j {
			return -1
		}
		return k
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	default:
		if i = digits(i); i < 0 {
			return -1
		}
	}
	if i < len(b) && b[i] == '.' {
		if i = digits(i + 1); i < 0 {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i = digits(i); i < 0 {
			return -1
		}
	}
	return i
}

// smallInt reports whether the valid JSON number lit is an integer that
// appendNumber writes as lit itself: 0, or at most 15 digits without a
// leading zero, optionally negative.
func smallInt(lit []byte) bool {
	if len(lit) == 1 && lit[0] == '0' {
		return true
	}
	d := lit
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 15 || d[0] == '0' {
		return false
	}
	for _, x := range d {
		if x < '0' || x > '9' {
			return false
		}
	}
	return true
}

// object rewrites the object at b[i]: its members are written in input
// order, then, unless their names were already strictly increasing, again
// sorted (the last of equal names kept) over the first writing.
func (c *canon) object(b []byte, i, depth int) int {
	start, base, sorted := len(c.out), len(c.mem), true
	c.out = append(c.out, '{')
	c.size += 2
	i = jsontext.SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		c.out = append(c.out, '}')
		return i + 1
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return -1
		}
		kend, simple := scanString(b, i)
		if kend < 0 {
			return -1
		}
		lit, key := b[i:kend], b[i+1:kend-1]
		asIs := simple || plain(key)
		if !asIs {
			d := decodeString(lit)
			c.keys = append(c.keys, d...)
			key = c.keys[len(c.keys)-len(d) : len(c.keys) : len(c.keys)]
		}
		if n := len(c.mem); n > base {
			c.out = append(c.out, ',')
			if bytes.Compare(c.mem[n-1].key, key) >= 0 {
				sorted = false
			}
		}
		ks := len(c.out)
		if asIs {
			c.out = append(c.out, lit...)
		} else {
			c.out = jsontext.AppendString(c.out, string(key))
		}
		c.out = append(c.out, ':')
		vs, size := len(c.out), c.size
		if i = jsontext.SkipSpace(b, kend); i >= len(b) || b[i] != ':' {
			return -1
		}
		if i = c.value(b, jsontext.SkipSpace(b, i+1), depth+1); i < 0 {
			return -1
		}
		c.mem = append(c.mem, rmember{key: key, ks: ks, vs: vs, ve: len(c.out), size: c.size - size + 4 + int64(len(key))})
		c.size += 4 + int64(len(key))
		if i = jsontext.SkipSpace(b, i); i >= len(b) {
			return -1
		}
		if b[i] == ',' {
			i = jsontext.SkipSpace(b, i+1)
			continue
		}
		if b[i] != '}' {
			return -1
		}
		break
	}
	c.out = append(c.out, '}')
	if !sorted {
		c.sort(start, base)
	}
	clear(c.mem[base:])
	c.mem = c.mem[:base]
	return i + 1
}

// sort writes the members of the object written at c.out[start:], whose
// members are c.mem[base:], again in sorted order without duplicates.
func (c *canon) sort(start, base int) {
	ms := c.mem[base:]
	slices.SortStableFunc(ms, func(x, y rmember) int { return bytes.Compare(x.key, y.key) })
	mid := len(c.out)
	c.out = append(c.out, '{')
	for j, m := range ms {
		if j+1 < len(ms) && bytes.Equal(ms[j+1].key, m.key) {
			c.size -= m.size // an earlier duplicate: the last wins
			continue
		}
		if len(c.out) > mid+1 {
			c.out = append(c.out, ',')
		}
		c.out = append(c.out, c.out[m.ks:m.ve]...)
	}
	c.out = append(c.out, '}')
	n := copy(c.out[start:], c.out[mid:])
	c.out = c.out[:start+n]
}

// plain reports whether the body s of a JSON string literal is the body
// jsontext.AppendString writes for its decoded value: no escape, no byte
// AppendString escapes, only valid UTF-8 other than U+2028 and U+2029.
func plain(s []byte) bool {
	for i := 0; i < len(s); {
		x := s[i]
		if x < utf8.RuneSelf {
			if x < 0x20 || x == '"' || x == '\\' || x == '<' || x == '>' || x == '&' {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && n == 1 || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += n
	}
	return true
}

// decodeString returns the string the valid JSON string literal lit
// decodes to, as Unmarshal decodes it.
func decodeString(lit []byte) string {
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		panic("catalog: decodeString of an invalid literal")
	}
	return s
}

// literalString returns the decoded value of a canonical string literal.
func literalString(lit []byte) string {
	if bytes.IndexByte(lit, '\\') < 0 {
		return string(lit[1 : len(lit)-1])
	}
	return decodeString(lit)
}

// rawTree decodes a raw schema Unmarshal accepts into an any (for the
// values nested deeper than maxValueDepth, which have no canonical form).
func rawTree(b []byte) (any, bool) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, false
	}
	return v, true
}

// rawObject reports whether the canonical form c is an object schema
// Build admits (see objectSchema): an object whose "type", when present,
// is "object".
func rawObject(c []byte) bool {
	if c[0] != '{' {
		return false
	}
	t, has := rawMember(c, "type")
	return !has || string(t) == `"object"`
}

// rawMember returns the value of the member named name (which needs no
// escape) of the canonical object c.
func rawMember(c []byte, name string) ([]byte, bool) {
	for i := 1; c[i] != '}'; {
		kend := jsontext.SkipString(c, i)
		vend := jsontext.SkipValue(c, kend+1)
		if string(c[i+1:kend-1]) == name {
			return c[kend+1 : vend], true
		}
		i = vend
		if c[i] == ',' {
			i++
		}
	}
	return nil, false
}

// eachMember calls f with the name literal and the value of each member of
// the canonical object c, in order.
func eachMember(c []byte, f func(key, v []byte)) {
	for i := 1; c[i] != '}'; {
		kend := jsontext.SkipString(c, i)
		vend := jsontext.SkipValue(c, kend+1)
		f(c[i:kend], c[kend+1:vend])
		i = vend
		if c[i] == ',' {
			i++
		}
	}
}

// packRaw is pack over the canonical form c of an admitted schema.
func (p *packer) packRaw(c []byte) (uint32, []string) {
	p.reset()
	p.rootRaw(c)
	return p.store(), p.dropped
}

// packWrittenRaw is packWritten over a canonical form c, which is the
// schema as written.
func (p *packer) packWrittenRaw(c []byte) uint32 {
	p.reset()
	p.buf = append(p.buf, c...)
	return p.store()
}

// packTool narrows the inputSchema v of a tool (decoded, or a
// json.RawMessage) into p and stores it as written into wp. k is its index
// in p, -1 when Build does not admit it (see admitted); w is its index in
// wp, -1 when it has no as-written form (nested deeper than
// maxValueDepth). form, when not nil, is the canonical form of v, a
// json.RawMessage, made already.
func packTool(p, wp *packer, v any, form []byte) (k, w int32, dropped []string) {
	k, w = -1, -1
	if form != nil {
		if !rawObject(form) {
			return k, w, nil
		}
		u, d := p.packRaw(form)
		return int32(u), int32(wp.packWrittenRaw(form)), d
	}
	if b, isRaw := v.(json.RawMessage); isRaw {
		switch p.canon.run(b) {
		case rawRefused:
			return k, w, nil
		case rawDeep:
			v = p.canon.takeTree()
		default:
			c := p.canon.out
			if !rawObject(c) {
				return k, w, nil
			}
			u, d := p.packRaw(c)
			return int32(u), int32(wp.packWrittenRaw(c)), d
		}
	}
	m, ok := objectSchema(v)
	if !ok {
		return k, w, nil
	}
	u, d, fits := p.pack(m)
	if !fits {
		return k, w, nil
	}
	k, dropped = int32(u), d
	if !p.form.inexact {
		// The form is what packWritten writes.
		return k, int32(wp.packWrittenRaw(p.form.buf)), dropped
	}
	if u, ok := wp.packWritten(m); ok {
		w = int32(u)
	}
	return k, w, dropped
}

// mayAdmit reports whether Build may admit the inputSchema v: for a
// decoded schema, whether objectSchema admits it; a json.RawMessage is
// checked while it is packed (see packTool), which rewrites it anyway.
func mayAdmit(v any) bool {
	if _, isRaw := v.(json.RawMessage); isRaw {
		return true
	}
	_, ok := objectSchema(v)
	return ok
}

// States of an outputSchema (see packOutput).
const (
	schemaNone = iota
	schemaInvalid
	schemaPacked
)

// packOutput narrows the outputSchema v (decoded, or a json.RawMessage)
// into *pp (made when nil and there is one to pack) and returns its index there, with schemaPacked. A nil v, a
// json.RawMessage of length 0 and one holding null are schemaNone; one
// that is not an object schema Build admits (see objectSchema), or bytes
// Unmarshal refuses, schemaInvalid.
func packOutput(pp **packer, v any) (k uint32, narrowed []string, state int) {
	p := *pp
	if p == nil {
		p = newPacker(maphash.MakeSeed())
	}
	if b, isRaw := v.(json.RawMessage); isRaw {
		if len(b) == 0 {
			return 0, nil, schemaNone
		}
		switch p.canon.run(b) {
		case rawRefused:
			return 0, nil, schemaInvalid
		case rawDeep:
			v = p.canon.takeTree()
		default:
			c := p.canon.out
			if string(c) == "null" {
				return 0, nil, schemaNone
			}
			if !rawObject(c) {
				return 0, nil, schemaInvalid
			}
			*pp = p
			k, narrowed = p.packRaw(c)
			return k, narrowed, schemaPacked
		}
	}
	if v == nil {
		return 0, nil, schemaNone
	}
	m, ok := objectSchema(v)
	if !ok {
		return 0, nil, schemaInvalid
	}
	k, narrowed, fits := p.pack(m)
	if !fits {
		return 0, nil, schemaInvalid
	}
	*pp = p
	return k, narrowed, schemaPacked
}

// schemaSize returns n plus valueSize of the schema v (decoded, or a
// json.RawMessage: valueSize of what Unmarshal decodes from it). Bytes
// Unmarshal refuses count their length. An output schema (input false)
// that is absent (see packOutput) counts nothing. c is scratch; canonical
// reports whether c.out holds v's canonical form afterwards.
func schemaSize(v any, n, limit int64, input bool, c *canon) (size int64, canonical bool) {
	if b, isRaw := v.(json.RawMessage); isRaw {
		if len(b) == 0 && !input {
			return n, false
		}
		switch c.run(b) {
		case rawRefused:
			return n + int64(len(b)), false
		case rawDeep:
			v = c.takeTree()
		default:
			if !input && string(c.out) == "null" {
				return n, false
			}
			return n + c.size, true
		}
	}
	if v == nil && !input {
		return n, false
	}
	return valueSize(v, n, limit, 0), false
}

// pageForms are the canonical forms of the raw input schemas of one tools
// page, which Discover's drain makes while it counts the page's bytes
// (see toolSize) and its preparer narrows from (see packTool).
type pageForms struct {
	data []byte
	// ends[i] is the end in data of tool i's form, which starts where
	// tool i-1's ends; equal ends mean no form.
	ends []int
}

// add appends tool len(f.ends)'s form, nil for none.
func (f *pageForms) add(form []byte) {
	f.data = append(f.data, form...)
	f.ends = append(f.ends, len(f.data))
}

// get returns tool i's form, nil when it has none.
func (f *pageForms) get(i int) []byte {
	if f == nil || i >= len(f.ends) {
		return nil
	}
	start := 0
	if i > 0 {
		start = f.ends[i-1]
	}
	if start == f.ends[i] {
		return nil
	}
	return f.data[start:f.ends[i]:f.ends[i]]
}

func (f *pageForms) reset() { f.data, f.ends = f.data[:0], f.ends[:0] }
