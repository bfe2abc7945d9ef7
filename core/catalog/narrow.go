package catalog

import (
	"bytes"
	"encoding/json"
	"math"
	"math/bits"
	"regexp"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/mcpward/mcpward/core/jsontext"
)

// maxSchemaDepth bounds how deep Narrow follows properties, items and
// additionalProperties; a subschema deeper than this is narrowed. It also
// bounds the recursion of the validator built from a narrowed schema.
const maxSchemaDepth = 32

// Keyword ids, in byte order of their names, so that writing the present
// keywords in id order writes sorted keys.
const (
	kwAdditionalProperties = iota
	kwConst
	kwDefault
	kwDescription
	kwEnum
	kwExamples
	kwExclusiveMaximum
	kwExclusiveMinimum
	kwFormat
	kwItems
	kwMaxItems
	kwMaxLength
	kwMaximum
	kwMinItems
	kwMinLength
	kwMinimum
	kwPattern
	kwProperties
	kwRequired
	kwTitle
	kwType
	numKeywords
)

var keywordNames = [numKeywords]string{
	kwAdditionalProperties: "additionalProperties",
	kwConst:                "const",
	kwDefault:              "default",
	kwDescription:          "description",
	kwEnum:                 "enum",
	kwExamples:             "examples",
	kwExclusiveMaximum:     "exclusiveMaximum",
	kwExclusiveMinimum:     "exclusiveMinimum",
	kwFormat:               "format",
	kwItems:                "items",
	kwMaxItems:             "maxItems",
	kwMaxLength:            "maxLength",
	kwMaximum:              "maximum",
	kwMinItems:             "minItems",
	kwMinLength:            "minLength",
	kwMinimum:              "minimum",
	kwPattern:              "pattern",
	kwProperties:           "properties",
	kwRequired:             "required",
	kwTitle:                "title",
	kwType:                 "type",
}

// keywordKeys are the keywords as written: quoted, with the colon.
var keywordKeys = func() (k [numKeywords]string) {
	for id, name := range keywordNames {
		k[id] = `"` + name + `":`
	}
	return k
}()

// annotationMask selects the annotation keywords: kept as they are (when
// well-formed), never enforced, and kept on an accepts-anything node that
// replaces an inexpressible subschema.
const annotationMask = 1<<kwDefault | 1<<kwDescription | 1<<kwExamples | 1<<kwFormat | 1<<kwTitle

// keyword returns the id of a keyword of the subset, or -1.
func keyword(k string) int {
	switch k {
	case "additionalProperties":
		return kwAdditionalProperties
	case "const":
		return kwConst
	case "default":
		return kwDefault
	case "description":
		return kwDescription
	case "enum":
		return kwEnum
	case "examples":
		return kwExamples
	case "exclusiveMaximum":
		return kwExclusiveMaximum
	case "exclusiveMinimum":
		return kwExclusiveMinimum
	case "format":
		return kwFormat
	case "items":
		return kwItems
	case "maxItems":
		return kwMaxItems
	case "maxLength":
		return kwMaxLength
	case "maximum":
		return kwMaximum
	case "minItems":
		return kwMinItems
	case "minLength":
		return kwMinLength
	case "minimum":
		return kwMinimum
	case "pattern":
		return kwPattern
	case "properties":
		return kwProperties
	case "required":
		return kwRequired
	case "title":
		return kwTitle
	case "type":
		return kwType
	}
	return -1
}

// inexpressible reports whether k is a keyword of some JSON Schema draft
// that constrains instances and is outside the subset. Every other keyword
// outside the subset ($schema, $id, $defs, definitions, $comment,
// deprecated, readOnly, contentMediaType, vendor "x-" keywords, OpenAPI's
// nullable, ...) has no validation meaning for a JSON Schema validator and
// is left out of the narrowed schema without a report.
func inexpressible(k string) bool {
	switch k {
	case "$ref", "$dynamicRef", "$recursiveRef",
		"allOf", "anyOf", "oneOf", "not", "if", "then", "else",
		"dependentSchemas", "dependentRequired", "dependencies",
		"patternProperties", "propertyNames", "unevaluatedProperties",
		"minProperties", "maxProperties",
		"prefixItems", "additionalItems", "unevaluatedItems",
		"contains", "minContains", "maxContains", "uniqueItems",
		"multipleOf", "divisibleBy", "disallow", "extends":
		return true
	}
	return false
}

// outside is what a schema object's keywords outside the subset tell
// (node's and rnode's).
type outside struct {
	// bad: a keyword with validation meaning outside the subset.
	bad bool
	// ref: a $ref-like keyword (draft-07 ignores its siblings).
	ref bool
	// patternProps: patternProperties, on which additionalProperties
	// depends.
	patternProps bool
}

// note records the member name k, which is not a keyword of the subset.
func (o *outside) note(k string) {
	if !inexpressible(k) {
		return
	}
	o.bad = true
	switch k {
	case "$ref", "$dynamicRef", "$recursiveRef":
		o.ref = true
	case "patternProperties":
		o.patternProps = true
	}
}

// node is one schema object sorted into the subset's keywords.
type node struct {
	vals    [numKeywords]any
	present uint32
	outside
}

func (nd *node) collect(m map[string]any) {
	for k, v := range m {
		if id := keyword(k); id >= 0 {
			nd.vals[id] = v
			nd.present |= 1 << id
			continue
		}
		nd.note(k)
	}
}

func schemaType(s string) bool {
	switch s {
	case "object", "array", "string", "number", "integer", "boolean", "null":
		return true
	}
	return false
}

func validType(v any) bool {
	switch t := v.(type) {
	case string:
		return schemaType(t)
	case []any:
		if len(t) == 0 {
			return false
		}
		for _, x := range t {
			s, ok := x.(string)
			if !ok || !schemaType(s) {
				return false
			}
		}
		return true
	}
	return false
}

func stringArray(v any) bool {
	a, ok := v.([]any)
	if !ok {
		return false
	}
	for _, x := range a {
		if _, ok := x.(string); !ok {
			return false
		}
	}
	return true
}

// count returns v as a non-negative integer keyword value (minLength, ...).
func count(v any) (float64, bool) {
	f, ok := number(v)
	return f, ok && f >= 0 && f == math.Trunc(f)
}

// invalid returns the keywords of the subset whose value the subset cannot
// enforce. Annotations are never invalid (an ill-formed one is left out).
// type is not checked at the root, which the caller handles.
func (nd *node) invalid(root bool) uint32 {
	var bad uint32
	for rest := nd.present; rest != 0; rest &= rest - 1 {
		id := bits.TrailingZeros32(rest)
		v := nd.vals[id]
		ok := true
		switch id {
		case kwType:
			ok = root || validType(v)
		case kwProperties:
			_, ok = v.(map[string]any)
		case kwRequired:
			ok = stringArray(v)
		case kwItems:
			_, tuple := v.([]any)
			ok = !tuple
		case kwEnum:
			_, ok = v.([]any)
		case kwMinimum, kwMaximum, kwExclusiveMinimum, kwExclusiveMaximum:
			_, ok = number(v)
		case kwMinLength, kwMaxLength, kwMinItems, kwMaxItems:
			_, ok = count(v)
		case kwPattern:
			s, isStr := v.(string)
			ok = isStr && utf8.ValidString(s)
			if ok {
				_, err := regexp.Compile(s)
				ok = err == nil
			}
		}
		if !ok {
			bad |= 1 << id
		}
	}
	return bad
}

// narrower walks a decoded schema once and writes the narrowed schema.
// It is reused across schemas (its buffers grow once).
type narrower struct {
	encoder
	// path is the JSON pointer of the subschema being written.
	path    []byte
	dropped []string
	// form writes a decoded schema's form for the walk (see rootTree).
	form formWriter
}

var narrowers = sync.Pool{New: func() any { return new(narrower) }}

// drop reports the subschema at n.path as narrowed.
func (n *narrower) drop() {
	p := "/"
	if len(n.path) > 0 {
		p = string(n.path)
	}
	n.dropped = append(n.dropped, p)
}

// Narrow returns the narrowed form of a tool's inputSchema, decoded as
// encoding/json decodes into an any, and the JSON pointers of the
// subschemas it replaced. It is a pure function, safe for concurrent use,
// and does not modify schema.
//
// The narrowed schema keeps the subset mcpward enforces: type (a name or
// an array of names), properties, required, additionalProperties (a bool
// or a schema), items (one schema), enum, const, minimum, maximum,
// exclusiveMinimum and exclusiveMaximum (numbers, as in 2020-12),
// minLength, maxLength, minItems, maxItems, and pattern when Go's regexp
// compiles it; and the annotations title, description, default, examples
// and format (format is not enforced). Other keywords with validation
// meaning in some draft ($ref, allOf, anyOf, oneOf, not, if/then/else,
// patternProperties, prefixItems, tuple items, a boolean
// exclusiveMinimum, an uncompilable pattern, ...) are inexpressible, and
// so is an ill-formed value of a subset keyword. Keywords without
// validation meaning ($schema, $defs, vendor keywords, ...) are left out
// silently.
//
// A subschema under properties, items or additionalProperties that is
// inexpressible, the boolean schema false, not a schema at all, or nested
// more than 32 levels deep (and not already accepting anything) is replaced by an accepts-anything node that
// keeps only the original's annotations (so the model still reads what the
// parameter means), and its path ("/properties/filter",
// "/properties/list/items", ...) is reported. It is replaced, never
// deleted: deleting it from an object with additionalProperties false
// would refuse the server's own parameter. required is carried through
// untouched.
//
// The root stays an object schema, because model APIs require one and
// arguments are always an object: its "type" is written as "object". When
// the root holds inexpressible keywords, those keywords are left out, the
// expressible ones still apply and "/" is reported; additionalProperties
// goes with patternProperties, which it depends on. A root that is not a
// JSON object, has a type other than "object", or holds a $ref (whose
// siblings draft-07 ignores) becomes {"type":"object"} plus its annotations,
// accepting any object, and "/" is reported.
//
// The output is compact JSON with sorted keys, written as encoding/json
// writes it; narrowing it again gives the same bytes and reports nothing.
//
// schema may also be a json.RawMessage: Narrow then returns what it
// returns for the value encoding/json's Unmarshal decodes from those bytes
// into an any (see ports.ToolItem), and for bytes Unmarshal refuses what
// it returns for nil.
func Narrow(schema any) (narrowed json.RawMessage, dropped []string) {
	n := narrowers.Get().(*narrower)
	n.reset()
	if b, isRaw := schema.(json.RawMessage); isRaw {
		c := canons.Get().(*canon)
		switch c.run(b) {
		case rawOK:
			n.rootRaw(c.out)
		case rawDeep:
			n.rootTree(c.takeTree())
		default:
			n.rootTree(nil)
		}
		canons.Put(c)
	} else {
		n.rootTree(schema)
	}
	narrowed, dropped = bytes.Clone(n.buf), n.dropped
	n.dropped = nil
	narrowers.Put(n)
	return narrowed, dropped
}

// reset prepares n for the next schema.
func (n *narrower) reset() {
	n.buf, n.path, n.dropped, n.keys = n.buf[:0], n.path[:0], nil, n.keys[:0]
}

// root writes the narrowed root schema.
func (n *narrower) root(v any) {
	m, ok := v.(map[string]any)
	if !ok {
		n.drop()
		n.buf = append(n.buf, `{"type":"object"}`...)
		return
	}
	var nd node // on the stack: storing values needs no write barrier
	nd.collect(m)
	if nd.ref || nd.present&(1<<kwType) != 0 && nd.vals[kwType] != any("object") {
		n.drop()
		nd.vals[kwType] = "object"
		n.emit(&nd, nd.present&annotationMask|1<<kwType, 0, true)
		return
	}
	mask := nd.present &^ nd.invalid(true)
	dropped := nd.bad || mask != nd.present
	if nd.patternProps {
		mask &^= 1 << kwAdditionalProperties
	}
	mask |= 1 << kwType
	nd.vals[kwType] = "object"
	start, dstart := len(n.buf), len(n.dropped)
	for {
		id := n.emit(&nd, mask, 0, true)
		if id < 0 {
			break
		}
		n.buf, n.dropped = n.buf[:start], n.dropped[:dstart]
		mask &^= 1 << id
		dropped = true
	}
	if dropped {
		n.dropped = append(n.dropped, "")
		copy(n.dropped[dstart+1:], n.dropped[dstart:])
		n.dropped[dstart] = "/"
	}
}

// schema writes the narrowed form of the subschema v at n.path.
func (n *narrower) schema(v any, depth int) {
	switch s := v.(type) {
	case map[string]any:
		var nd node
		nd.collect(s)
		// Past the depth bound only an accepts-anything node is kept.
		tooDeep := depth > maxSchemaDepth && nd.present&^annotationMask != 0
		if tooDeep || nd.bad || nd.invalid(false) != 0 {
			n.replace(&nd, depth)
			return
		}
		start, dstart := len(n.buf), len(n.dropped)
		if n.emit(&nd, nd.present, depth, false) >= 0 {
			n.buf, n.dropped = n.buf[:start], n.dropped[:dstart]
			n.replace(&nd, depth)
		}
	case bool:
		if !s {
			n.drop()
		}
		n.buf = append(n.buf, "{}"...)
	default:
		n.drop()
		n.buf = append(n.buf, "{}"...)
	}
}

// replace reports n.path and writes an accepts-anything node with nd's
// annotations.
func (n *narrower) replace(nd *node, depth int) {
	n.drop()
	n.emit(nd, nd.present&annotationMask, depth, false)
}

// emit writes the keywords of nd selected by mask, in sorted order, and
// returns -1, or the id of a keyword (enum, const, properties) whose value
// cannot be written, in which case the buffer holds a partial node. An
// ill-formed annotation is left out.
func (n *narrower) emit(nd *node, mask uint32, depth int, root bool) int {
	n.buf = append(n.buf, '{')
	first := true
	for rest := mask; rest != 0; rest &= rest - 1 {
		id := bits.TrailingZeros32(rest)
		mark := len(n.buf)
		if !first {
			n.buf = append(n.buf, ',')
		}
		n.buf = append(n.buf, keywordKeys[id]...)
		v := nd.vals[id]
		ok := true
		switch id {
		case kwTitle, kwDescription, kwFormat:
			s, isStr := v.(string)
			if ok = isStr; ok {
				n.buf = jsontext.AppendString(n.buf, s)
			}
		case kwDefault, kwExamples:
			ok = n.value(v, 0)
		case kwConst, kwEnum:
			if !n.value(v, 0) {
				return id
			}
		case kwType, kwRequired:
			n.value(v, 0) // validated: names
		case kwMinimum, kwMaximum, kwExclusiveMinimum, kwExclusiveMaximum,
			kwMinLength, kwMaxLength, kwMinItems, kwMaxItems:
			f, _ := number(v)
			n.buf = appendNumber(n.buf, f)
		case kwPattern:
			n.buf = jsontext.AppendString(n.buf, v.(string))
		case kwItems:
			n.child(v, "/items", depth)
		case kwAdditionalProperties:
			if b, isBool := v.(bool); isBool {
				n.buf = strconv.AppendBool(n.buf, b)
			} else {
				n.child(v, "/additionalProperties", depth)
			}
		case kwProperties:
			props := v.(map[string]any)
			base := n.pushKeys(props)
			if base < 0 {
				return id
			}
			end := len(n.keys)
			n.buf = append(n.buf, '{')
			for i := base; i < end; i++ {
				if i > base {
					n.buf = append(n.buf, ',')
				}
				m := n.keys[i]
				n.buf = jsontext.AppendString(n.buf, m.k)
				n.buf = append(n.buf, ':')
				plen := len(n.path)
				n.path = append(n.path, "/properties/"...)
				n.path = appendPointerToken(n.path, m.k)
				n.schema(m.v, depth+1)
				n.path = n.path[:plen]
			}
			n.buf = append(n.buf, '}')
			n.popKeys(base)
		}
		if !ok {
			n.buf = n.buf[:mark]
			continue
		}
		first = false
	}
	n.buf = append(n.buf, '}')
	return -1
}

func (n *narrower) child(v any, seg string, depth int) {
	plen := len(n.path)
	n.path = append(n.path, seg...)
	n.schema(v, depth+1)
	n.path = n.path[:plen]
}

// appendPointerToken appends s escaped as a JSON pointer token (RFC 6901).
func appendPointerToken[S string | []byte](dst []byte, s S) []byte {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '~':
			dst = append(dst, '~', '0')
		case '/':
			dst = append(dst, '~', '1')
		default:
			dst = append(dst, s[i])
		}
	}
	return dst
}
