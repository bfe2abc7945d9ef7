package catalog

import (
	"bytes"
	"encoding/json"
	"sync"
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
// (see rnode).
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

func schemaType(s string) bool {
	switch s {
	case "object", "array", "string", "number", "integer", "boolean", "null":
		return true
	}
	return false
}

// narrower writes narrowed schemas: it walks a schema's canonical form
// once (see rootRaw), a decoded schema's after writing it (see rootTree).
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
// A decoded schema whose JSON passes MaxSchemaBytes, which only a Go value
// sharing one sub-schema many times over or holding a cycle can do
// without holding that much, is narrowed as a root that is no JSON object,
// as soon as writing it passes that bound; a cycle the depth limits end
// first gives what nesting past them gives (see the package doc, "Schemas
// as Go values"). Narrow's work is bounded by a small multiple of
// MaxSchemaBytes whatever schema holds.
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
	n.startValue()
	n.path, n.dropped, n.keys = n.path[:0], nil, n.keys[:0]
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
