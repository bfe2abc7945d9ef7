package catalog

import (
	"bytes"
	"math"
	"math/bits"
	"regexp"
	"strconv"
)

// This file is the narrowing walk. It reads a schema's canonical form:
// canon's for raw bytes, formWriter's for a decoded schema. A form's
// values are what the encoder writes, so the walk copies them, except
// notEncodable, which stands for a value it cannot write and which the
// walk never copies.

// rnode is one schema object sorted into the subset's keywords: vals are
// the keywords' values as the form holds them.
type rnode struct {
	vals    [numKeywords][]byte
	present uint32
	outside
}

// collect sorts the members of the canonical object c into nd.
func (nd *rnode) collect(c []byte) {
	eachMember(c, func(key, v []byte) {
		k := string(key[1 : len(key)-1]) // a keyword needs no escape
		if id := keyword(k); id >= 0 {
			nd.vals[id] = v
			nd.present |= 1 << id
			return
		}
		nd.note(k)
	})
}

// rawString reports whether the canonical value v is a string.
func rawString(v []byte) bool { return v[0] == '"' }

// rawNumber returns the canonical value v as a number, and whether it is
// one.
func rawNumber(v []byte) (float64, bool) {
	if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

// rawSchemaType is schemaType of a canonical string literal.
func rawSchemaType(v []byte) bool {
	return rawString(v) && schemaType(string(v[1:len(v)-1]))
}

// rawElements calls f with each element of the canonical array v until f
// returns false, and reports whether it never did.
func rawElements(v []byte, f func(e []byte) bool) bool {
	ok := true
	eachElement(v, func(e []byte) bool {
		ok = f(e)
		return ok
	})
	return ok
}

func rawValidType(v []byte) bool {
	switch v[0] {
	case '"':
		return rawSchemaType(v)
	case '[':
		return len(v) > 2 && rawElements(v, rawSchemaType)
	}
	return false
}

// invalid returns the keywords of the subset whose value the subset cannot
// enforce. Annotations are never invalid (an ill-formed one is left out).
// type is not checked at the root, which the caller handles.
func (nd *rnode) invalid(root bool) uint32 {
	var bad uint32
	for rest := nd.present; rest != 0; rest &= rest - 1 {
		id := bits.TrailingZeros32(rest)
		v := nd.vals[id]
		ok := true
		switch id {
		case kwType:
			ok = root || rawValidType(v)
		case kwProperties:
			ok = v[0] == '{'
		case kwRequired:
			ok = v[0] == '[' && rawElements(v, rawString)
		case kwItems:
			ok = v[0] != '['
		case kwEnum:
			ok = v[0] == '['
		case kwConst:
			ok = v[0] != notEncodable
		case kwMinimum, kwMaximum, kwExclusiveMinimum, kwExclusiveMaximum:
			_, ok = rawNumber(v)
		case kwMinLength, kwMaxLength, kwMinItems, kwMaxItems:
			f, isNum := rawNumber(v)
			ok = isNum && f >= 0 && f == math.Trunc(f)
		case kwPattern:
			// A form's strings are valid UTF-8 (see formWriter).
			ok = rawString(v)
			if ok {
				_, err := regexp.Compile(literalString(v))
				ok = err == nil
			}
		}
		if !ok {
			bad |= 1 << id
		}
	}
	return bad
}

// objectLiteral is the canonical "object".
var objectLiteral = []byte(`"object"`)

// rootTree writes the narrowed form of the decoded schema v: its form
// (see formWriter), walked by rootRaw. A schema whose form passes the
// budget (n.form.over) is narrowed as a root that is no JSON object.
func (n *narrower) rootTree(v any) {
	n.form.form(v)
	if n.form.over {
		// Drop the buffer, which may have grown to the budget, so that
		// the pool does not keep it.
		n.form.buf = nil
		n.rootRaw(nullLiteral)
		return
	}
	n.rootRaw(n.form.buf)
}

// nullLiteral is the canonical null.
var nullLiteral = []byte("null")

// rootRaw writes the narrowed root schema from its form c.
func (n *narrower) rootRaw(c []byte) {
	if c[0] != '{' {
		n.drop()
		n.buf = append(n.buf, `{"type":"object"}`...)
		return
	}
	var nd rnode
	nd.collect(c)
	if nd.ref || nd.present&(1<<kwType) != 0 && string(nd.vals[kwType]) != `"object"` {
		n.drop()
		nd.vals[kwType] = objectLiteral
		n.emitRaw(&nd, nd.present&annotationMask|1<<kwType, 0)
		return
	}
	mask := nd.present &^ nd.invalid(true)
	dropped := nd.bad || mask != nd.present
	if nd.patternProps {
		mask &^= 1 << kwAdditionalProperties
	}
	mask |= 1 << kwType
	nd.vals[kwType] = objectLiteral
	dstart := len(n.dropped)
	n.emitRaw(&nd, mask, 0)
	if dropped {
		n.dropped = append(n.dropped, "")
		copy(n.dropped[dstart+1:], n.dropped[dstart:])
		n.dropped[dstart] = "/"
	}
}

// schemaRaw writes the narrowed form of the subschema whose form is v,
// at n.path; one that is inexpressible, not a schema, false, or too deep
// is replaced by an accepts-anything node with its annotations, and its
// path reported.
func (n *narrower) schemaRaw(v []byte, depth int) {
	switch v[0] {
	case '{':
		var nd rnode
		nd.collect(v)
		tooDeep := depth > maxSchemaDepth && nd.present&^annotationMask != 0
		if tooDeep || nd.bad || nd.invalid(false) != 0 {
			n.drop()
			n.emitRaw(&nd, nd.present&annotationMask, depth)
			return
		}
		n.emitRaw(&nd, nd.present, depth)
	case 't':
		n.buf = append(n.buf, "{}"...)
	default: // false, or not a schema
		n.drop()
		n.buf = append(n.buf, "{}"...)
	}
}

// emitRaw writes the keywords of nd selected by mask, in sorted order. An
// ill-formed annotation is left out.
func (n *narrower) emitRaw(nd *rnode, mask uint32, depth int) {
	n.buf = append(n.buf, '{')
	first := true
	for rest := mask; rest != 0; rest &= rest - 1 {
		id := bits.TrailingZeros32(rest)
		v := nd.vals[id]
		switch id {
		case kwTitle, kwDescription, kwFormat:
			if !rawString(v) {
				continue // an ill-formed annotation
			}
		case kwDefault, kwExamples:
			if v[0] == notEncodable {
				continue
			}
		}
		if !first {
			n.buf = append(n.buf, ',')
		}
		first = false
		n.buf = append(n.buf, keywordKeys[id]...)
		switch id {
		case kwItems:
			n.childRaw(v, "/items", depth)
		case kwAdditionalProperties:
			if v[0] == 't' || v[0] == 'f' {
				n.buf = append(n.buf, v...)
			} else {
				n.childRaw(v, "/additionalProperties", depth)
			}
		case kwProperties:
			n.buf = append(n.buf, '{')
			i := 0
			eachMember(v, func(key, sub []byte) {
				if i > 0 {
					n.buf = append(n.buf, ',')
				}
				i++
				n.buf = append(n.buf, key...)
				n.buf = append(n.buf, ':')
				plen := len(n.path)
				n.path = append(n.path, "/properties/"...)
				if body := key[1 : len(key)-1]; bytes.IndexByte(body, '\\') < 0 {
					n.path = appendPointerToken(n.path, body)
				} else {
					n.path = appendPointerToken(n.path, decodeString(key))
				}
				n.schemaRaw(sub, depth+1)
				n.path = n.path[:plen]
			})
			n.buf = append(n.buf, '}')
		default:
			// Strings, numbers and values as canonical bytes are
			// what the encoder writes.
			n.buf = append(n.buf, v...)
		}
	}
	n.buf = append(n.buf, '}')
}

func (n *narrower) childRaw(v []byte, seg string, depth int) {
	plen := len(n.path)
	n.path = append(n.path, seg...)
	n.schemaRaw(v, depth+1)
	n.path = n.path[:plen]
}
