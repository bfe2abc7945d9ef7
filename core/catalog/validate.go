package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits on the arguments of one tool call, checked before they are
// decoded; hostile arguments past them are refused as invalid_arguments
// at "/" (rules "too_large" and "too_deep").
const (
	// MaxArgumentBytes bounds the size of a call's arguments. A model's
	// output is far smaller; this only stops a host bug or a hostile
	// prompt from making mcpward decode an unbounded document.
	MaxArgumentBytes = 4 << 20
	// MaxArgumentDepth bounds the nesting of arrays and objects in a
	// call's arguments.
	MaxArgumentDepth = 64
)

// Argument rules: the ArgumentError.Rule words. Each schema keyword has
// its rule; the first three concern the arguments as a whole.
const (
	// RuleInvalidJSON: the arguments are not one JSON value.
	RuleInvalidJSON = "invalid_json"
	// RuleTooLarge: the arguments exceed MaxArgumentBytes.
	RuleTooLarge = "too_large"
	// RuleTooDeep: the arguments nest deeper than MaxArgumentDepth.
	RuleTooDeep = "too_deep"
	// RuleType: a value of the wrong type, or arguments that are not an
	// object.
	RuleType = "type"
	// RuleRequired: a required property is missing; the path names it.
	RuleRequired = "required"
	// RuleAdditionalProperty: a property the object's schema does not
	// allow, or one failing the additionalProperties schema; the path is
	// the object's.
	RuleAdditionalProperty = "additional_property"
	RuleEnum               = "enum"
	RuleConst              = "const"
	RuleMinimum            = "minimum"
	RuleMaximum            = "maximum"
	RuleExclusiveMinimum   = "exclusive_minimum"
	RuleExclusiveMaximum   = "exclusive_maximum"
	RuleMinLength          = "min_length"
	RuleMaxLength          = "max_length"
	RuleMinItems           = "min_items"
	RuleMaxItems           = "max_items"
	RulePattern            = "pattern"
)

// Instance type bits.
const (
	tNull = 1 << iota
	tBoolean
	tObject
	tArray
	tNumber
	tString
	tInteger
)

var typeBits = map[string]uint8{
	"null": tNull, "boolean": tBoolean, "object": tObject, "array": tArray,
	"number": tNumber | tInteger, "string": tString, "integer": tInteger,
}

// Constraint bits of a vnode.
const (
	hasEnum = 1 << iota
	hasConst
	hasMinimum
	hasMaximum
	hasExclusiveMinimum
	hasExclusiveMaximum
	hasMinLength
	hasMaxLength
	hasMinItems
	hasMaxItems
)

// vnode is one compiled subschema of a narrowed schema. The zero value
// accepts anything.
type vnode struct {
	types    uint8 // 0: any type
	has      uint16
	props    map[string]*vnode
	required []string
	noAddl   bool   // additionalProperties false
	addl     *vnode // additionalProperties schema, or nil
	items    *vnode
	enum     []any
	constv   any
	num      [4]float64 // minimum, maximum, exclusiveMinimum, exclusiveMaximum
	counts   [4]float64 // minLength, maxLength, minItems, maxItems
	pattern  *regexp.Regexp
}

// compileSchema compiles a narrowed schema (the JSON Narrow wrote).
func compileSchema(narrowed []byte) (*vnode, error) {
	var v any
	if err := json.Unmarshal(narrowed, &v); err != nil {
		return nil, err
	}
	return compileNode(v, 0)
}

var errBadSchema = errors.New("catalog: narrowed schema outside the subset")

func compileNode(v any, depth int) (*vnode, error) {
	m, ok := v.(map[string]any)
	if !ok || depth > maxSchemaDepth+1 {
		return nil, errBadSchema
	}
	n := &vnode{}
	if t, ok := m["type"]; ok {
		switch t := t.(type) {
		case string:
			n.types = typeBits[t]
		case []any:
			for _, x := range t {
				s, _ := x.(string)
				n.types |= typeBits[s]
			}
		}
		if n.types == 0 {
			return nil, errBadSchema
		}
	}
	if p, ok := m["properties"].(map[string]any); ok {
		n.props = make(map[string]*vnode, len(p))
		for k, s := range p {
			c, err := compileNode(s, depth+1)
			if err != nil {
				return nil, err
			}
			n.props[k] = c
		}
	}
	if r, ok := m["required"].([]any); ok {
		n.required = make([]string, 0, len(r))
		for _, x := range r {
			s, _ := x.(string)
			n.required = append(n.required, s)
		}
	}
	switch a := m["additionalProperties"].(type) {
	case bool:
		n.noAddl = !a
	case map[string]any:
		c, err := compileNode(a, depth+1)
		if err != nil {
			return nil, err
		}
		n.addl = c
	}
	if it, ok := m["items"]; ok {
		c, err := compileNode(it, depth+1)
		if err != nil {
			return nil, err
		}
		n.items = c
	}
	if e, ok := m["enum"].([]any); ok {
		n.has |= hasEnum
		n.enum = e
	}
	if c, ok := m["const"]; ok {
		n.has |= hasConst
		n.constv = c
	}
	for i, k := range [4]string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
		if f, ok := m[k].(float64); ok {
			n.has |= hasMinimum << i
			n.num[i] = f
		}
	}
	for i, k := range [4]string{"minLength", "maxLength", "minItems", "maxItems"} {
		if f, ok := m[k].(float64); ok {
			n.has |= hasMinLength << i
			n.counts[i] = f
		}
	}
	if p, ok := m["pattern"].(string); ok {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, err
		}
		n.pattern = re
	}
	return n, nil
}

// pathSeg is one step of an instance path: a property name of the schema
// or an array index.
type pathSeg struct {
	name string
	idx  int // -1 for a name
}

// failure is a validation failure; segs are in reverse order (innermost
// first), appended while unwinding.
type failure struct {
	rule string
	segs []pathSeg
}

func (f *failure) at(s pathSeg) *failure {
	f.segs = append(f.segs, s)
	return f
}

// path renders the failure's JSON pointer.
func (f *failure) path() string {
	if len(f.segs) == 0 {
		return "/"
	}
	var b []byte
	for _, s := range slices.Backward(f.segs) {
		b = append(b, '/')
		if s.idx >= 0 {
			b = strconv.AppendInt(b, int64(s.idx), 10)
		} else {
			b = appendPointerToken(b, s.name)
		}
	}
	return string(b)
}

// decodeArgs checks a call's arguments against the size and depth limits
// and decodes them, numbers as json.Number.
func decodeArgs(args []byte) (any, *failure) {
	if len(args) > MaxArgumentBytes {
		return nil, &failure{rule: RuleTooLarge}
	}
	depth, inString := 0, false
	for i := 0; i < len(args); i++ {
		c := args[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			if depth++; depth > MaxArgumentDepth {
				return nil, &failure{rule: RuleTooDeep}
			}
		case ']', '}':
			depth--
		}
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &failure{rule: RuleInvalidJSON}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &failure{rule: RuleInvalidJSON}
	}
	return v, nil
}

// kind returns the type bits of a decoded instance.
func kind(v any) uint8 {
	switch x := v.(type) {
	case nil:
		return tNull
	case bool:
		return tBoolean
	case map[string]any:
		return tObject
	case []any:
		return tArray
	case string:
		return tString
	case json.Number:
		if integerLiteral(string(x)) {
			return tNumber | tInteger
		}
		return tNumber
	}
	return 0
}

// integerLiteral reports whether the JSON number literal s denotes an
// integer (1, 1.0, 1e3, 2.50e1 do; 1.5, 1e-1 do not), exactly.
func integerLiteral(s string) bool {
	s = strings.TrimPrefix(s, "-")
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.Atoi(s[i+1:])
		if err != nil {
			// A huge exponent: an integer when positive (or when the
			// mantissa is zero).
			return s[i+1] != '-' || allZero(mant)
		}
		exp = e
	}
	intPart, frac := mant, ""
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	if allZero(intPart) && allZero(frac) {
		return true
	}
	if exp >= 0 {
		// Digits of frac beyond the first exp must be zero.
		if exp >= len(frac) {
			return true
		}
		return allZero(frac[exp:])
	}
	// A negative exponent: frac and the last -exp digits of intPart
	// must be zero.
	if !allZero(frac) {
		return false
	}
	if -exp >= len(intPart) {
		return false // intPart is non-zero here and shifts below 1
	}
	return allZero(intPart[len(intPart)+exp:])
}

func allZero(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '0' {
			return false
		}
	}
	return true
}

// validate checks v against n and returns the first failure, or nil.
// Object members are visited in key order, so the failure reported is
// deterministic.
func (n *vnode) validate(v any) *failure {
	k := kind(v)
	if n.types != 0 && n.types&k == 0 {
		return &failure{rule: RuleType}
	}
	if n.has&hasConst != 0 && !jsonEqual(n.constv, v, 0) {
		return &failure{rule: RuleConst}
	}
	if n.has&hasEnum != 0 && !slices.ContainsFunc(n.enum, func(e any) bool { return jsonEqual(e, v, 0) }) {
		return &failure{rule: RuleEnum}
	}
	switch x := v.(type) {
	case json.Number:
		f, _ := strconv.ParseFloat(string(x), 64) // ±Inf beyond range
		switch {
		case n.has&hasMinimum != 0 && f < n.num[0]:
			return &failure{rule: RuleMinimum}
		case n.has&hasMaximum != 0 && f > n.num[1]:
			return &failure{rule: RuleMaximum}
		case n.has&hasExclusiveMinimum != 0 && f <= n.num[2]:
			return &failure{rule: RuleExclusiveMinimum}
		case n.has&hasExclusiveMaximum != 0 && f >= n.num[3]:
			return &failure{rule: RuleExclusiveMaximum}
		}
	case string:
		if n.has&(hasMinLength|hasMaxLength) != 0 {
			l := float64(utf8.RuneCountInString(x))
			if n.has&hasMinLength != 0 && l < n.counts[0] {
				return &failure{rule: RuleMinLength}
			}
			if n.has&hasMaxLength != 0 && l > n.counts[1] {
				return &failure{rule: RuleMaxLength}
			}
		}
		if n.pattern != nil && !n.pattern.MatchString(x) {
			return &failure{rule: RulePattern}
		}
	case []any:
		l := float64(len(x))
		if n.has&hasMinItems != 0 && l < n.counts[2] {
			return &failure{rule: RuleMinItems}
		}
		if n.has&hasMaxItems != 0 && l > n.counts[3] {
			return &failure{rule: RuleMaxItems}
		}
		if n.items != nil {
			for i, el := range x {
				if f := n.items.validate(el); f != nil {
					return f.at(pathSeg{idx: i})
				}
			}
		}
	case map[string]any:
		return n.validateObject(x)
	}
	return nil
}

func (n *vnode) validateObject(m map[string]any) *failure {
	for _, r := range n.required {
		if _, ok := m[r]; !ok {
			return (&failure{rule: RuleRequired}).at(pathSeg{name: r, idx: -1})
		}
	}
	if n.props == nil && !n.noAddl && n.addl == nil {
		return nil
	}
	// Unordered first (no allocation); on a failure, again in key order
	// to report the first failing member deterministically.
	for k, v := range m {
		if n.member(k, v) != nil {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if f := n.member(k, m[k]); f != nil {
					return f
				}
			}
		}
	}
	return nil
}

// member validates the member k of an object. A failure of a property the
// schema names is reported under its name; an additional property is
// reported at the object itself, so a path never carries a name the
// arguments chose.
func (n *vnode) member(k string, v any) *failure {
	if s, ok := n.props[k]; ok {
		if f := s.validate(v); f != nil {
			return f.at(pathSeg{name: k, idx: -1})
		}
		return nil
	}
	if n.noAddl {
		return &failure{rule: RuleAdditionalProperty}
	}
	if n.addl != nil && n.addl.validate(v) != nil {
		return &failure{rule: RuleAdditionalProperty}
	}
	return nil
}

// jsonEqual reports whether the schema value a (numbers as float64) and the
// instance b (numbers as json.Number) are equal JSON values; numbers
// compare by value.
func jsonEqual(a, b any, depth int) bool {
	if depth > maxValueDepth {
		return false
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case float64:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		f, err := strconv.ParseFloat(string(y), 64)
		return err == nil && f == x
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i], depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !jsonEqual(xv, yv, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}
