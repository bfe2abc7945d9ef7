package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
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
	// n is the subschema the value broke (nil for the rules about the
	// arguments as a whole), k the value's type bit for RuleType.
	n *vnode
	k uint8
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

// checkArgs checks a call's arguments against the size and depth limits,
// that they are exactly one JSON object (whitespace around it allowed),
// and validates them against root (nil accepts any object), returning
// the first failure or nil.
//
// It reads the bytes once, without decoding them into Go values, and
// reports exactly what decoding them with encoding/json (numbers as
// json.Number) and validating the decoded value would: invalid JSON
// anywhere wins over a schema failure; a duplicate member counts with
// its last value only (its earlier values must still be valid JSON);
// strings, names included, compare as encoding/json decodes them
// (escapes resolved, invalid UTF-8 and lone surrogates as U+FFFD); an
// object's first failure is its first missing required property, else
// that of its failing member whose name sorts first.
func checkArgs(args []byte, root *vnode) *failure {
	if len(args) > MaxArgumentBytes {
		return &failure{rule: RuleTooLarge}
	}
	// The depth limit applies to invalid JSON too, counting brackets
	// outside strings (tooDeep). In valid JSON that count is the nesting
	// the scanner sees, and the scanner stops past the limit, so only
	// arguments it stops on need counting.
	var s argScanner
	s.data = args
	s.ws()
	isObject := s.pos < len(args) && args[s.pos] == '{'
	var f *failure
	if isObject {
		f = s.value(root, 0)
	} else {
		s.value(nil, 0)
	}
	if !s.bad {
		s.ws()
		s.bad = s.pos != len(args)
	}
	switch {
	case s.bad && tooDeep(args):
		return &failure{rule: RuleTooDeep}
	case s.bad:
		return &failure{rule: RuleInvalidJSON}
	case !isObject:
		return &failure{rule: RuleType, n: &vnode{types: tObject}, k: kindOf(args)}
	}
	return f
}

// validJSON reports json.Valid(b). The argument scanner's single pass
// (about three times faster) decides every b it accepts; what it refuses,
// invalid JSON or JSON nested deeper than MaxArgumentDepth, which
// json.Valid allows, is left to json.Valid.
func validJSON(b []byte) bool {
	s := argScanner{data: b}
	s.value(nil, 0)
	if !s.bad {
		s.ws()
		if s.pos == len(b) {
			return true
		}
	}
	return json.Valid(b)
}

// tooDeep reports whether args nest arrays and objects deeper than
// MaxArgumentDepth, counting the brackets outside strings whether or not
// args are valid JSON.
func tooDeep(args []byte) bool {
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
				return true
			}
		case ']', '}':
			depth--
		}
	}
	return false
}

// memberRec is the record of one object member: its decoded name and the
// failure its (last) value gives, if any.
type memberRec struct {
	name []byte
	fail *failure
}

// argScanner is a single-pass JSON syntax checker and schema validator.
// A nil schema checks syntax only.
type argScanner struct {
	data []byte
	pos  int
	bad  bool // a syntax error or nesting past MaxArgumentDepth
}

// ws skips JSON whitespace.
func (s *argScanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value scans one value (after whitespace) and validates it against n.
// On a syntax error it sets s.bad, and its result is meaningless.
func (s *argScanner) value(n *vnode, depth int) *failure {
	s.ws()
	if s.pos >= len(s.data) {
		s.bad = true
		return nil
	}
	if c := s.data[s.pos]; (c == '{' || c == '[') && depth >= MaxArgumentDepth {
		s.bad = true // tooDeep decides which
		return nil
	}
	start := s.pos
	var (
		k    uint8
		text []byte // a string's decoded value or a number's literal
		f    *failure
	)
	switch c := s.data[s.pos]; {
	case c == '{':
		if n != nil && n.types != 0 && n.types&tObject == 0 {
			s.object(nil, depth)
			return &failure{rule: RuleType, n: n, k: tObject}
		}
		f = s.object(n, depth)
		k = tObject
	case c == '[':
		if n != nil && n.types != 0 && n.types&tArray == 0 {
			s.array(nil, depth)
			return &failure{rule: RuleType, n: n, k: tArray}
		}
		f = s.array(n, depth)
		k = tArray
	case c == '"':
		a, b, plain := s.str()
		if s.bad || n == nil {
			return nil
		}
		k = tString
		if n.has&(hasConst|hasEnum|hasMinLength|hasMaxLength) != 0 || n.pattern != nil {
			text = s.decode(a, b, plain)
		}
	case c == 't':
		s.literal("true")
		k = tBoolean
	case c == 'f':
		s.literal("false")
		k = tBoolean
	case c == 'n':
		s.literal("null")
		k = tNull
	case c == '-' || c >= '0' && c <= '9':
		text = s.number()
		k = tNumber
	default:
		s.bad = true
	}
	if s.bad || n == nil {
		return nil
	}
	if n.types != 0 && n.types&k == 0 {
		// Only a number can still match: as an integer.
		if k != tNumber || n.types&tInteger == 0 || !integerLiteral(string(text)) {
			return &failure{rule: RuleType, n: n, k: k}
		}
	}
	if n.has&(hasConst|hasEnum) != 0 {
		if k == tArray || k == tObject {
			// Rare: an array or object checked against const or enum
			// values. Decode it as encoding/json does, once.
			var v any
			dec := json.NewDecoder(bytes.NewReader(s.data[start:s.pos]))
			dec.UseNumber()
			_ = dec.Decode(&v) // valid JSON: scanned
			if n.has&hasConst != 0 && !jsonEqual(n.constv, v, 0) {
				return &failure{rule: RuleConst, n: n}
			}
			if n.has&hasEnum != 0 && !slices.ContainsFunc(n.enum, func(e any) bool { return jsonEqual(e, v, 0) }) {
				return &failure{rule: RuleEnum, n: n}
			}
			return f
		}
		if n.has&hasConst != 0 && !s.equalScalar(n.constv, k, text, start) {
			return &failure{rule: RuleConst, n: n}
		}
		if n.has&hasEnum != 0 && !slices.ContainsFunc(n.enum, func(e any) bool { return s.equalScalar(e, k, text, start) }) {
			return &failure{rule: RuleEnum, n: n}
		}
	}
	switch k {
	case tNumber:
		if n.has&(hasMinimum|hasMaximum|hasExclusiveMinimum|hasExclusiveMaximum) == 0 {
			break
		}
		x, _ := strconv.ParseFloat(string(text), 64) // ±Inf beyond range
		switch {
		case n.has&hasMinimum != 0 && x < n.num[0]:
			return &failure{rule: RuleMinimum, n: n}
		case n.has&hasMaximum != 0 && x > n.num[1]:
			return &failure{rule: RuleMaximum, n: n}
		case n.has&hasExclusiveMinimum != 0 && x <= n.num[2]:
			return &failure{rule: RuleExclusiveMinimum, n: n}
		case n.has&hasExclusiveMaximum != 0 && x >= n.num[3]:
			return &failure{rule: RuleExclusiveMaximum, n: n}
		}
	case tString:
		if n.has&(hasMinLength|hasMaxLength) != 0 {
			l := float64(utf8.RuneCount(text))
			if n.has&hasMinLength != 0 && l < n.counts[0] {
				return &failure{rule: RuleMinLength, n: n}
			}
			if n.has&hasMaxLength != 0 && l > n.counts[1] {
				return &failure{rule: RuleMaxLength, n: n}
			}
		}
		if n.pattern != nil && !n.pattern.Match(text) {
			return &failure{rule: RulePattern, n: n}
		}
	}
	return f
}

// equalScalar reports whether the schema value e equals the scanned
// scalar of kind k starting at start, compared as jsonEqual compares it
// with its decoded value: text is a string's decoded value or a number's
// literal.
func (s *argScanner) equalScalar(e any, k uint8, text []byte, start int) bool {
	switch x := e.(type) {
	case nil:
		return k == tNull
	case bool:
		return k == tBoolean && x == (s.data[start] == 't')
	case string:
		return k == tString && x == string(text)
	case float64:
		if k != tNumber {
			return false
		}
		f, err := strconv.ParseFloat(string(text), 64)
		return err == nil && f == x
	}
	return false // an array or object never equals a scalar
}

// literal scans the literal w.
func (s *argScanner) literal(w string) {
	if len(s.data)-s.pos < len(w) || string(s.data[s.pos:s.pos+len(w)]) != w {
		s.bad = true
		return
	}
	s.pos += len(w)
}

// number scans a number and returns its literal.
func (s *argScanner) number() []byte {
	d, i := s.data, s.pos
	digits := func() bool {
		j := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		return i > j
	}
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case !digits():
		s.bad = true
		return nil
	}
	if i < len(d) && d[i] == '.' {
		i++
		if !digits() {
			s.bad = true
			return nil
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if !digits() {
			s.bad = true
			return nil
		}
	}
	text := d[s.pos:i]
	s.pos = i
	return text
}

// str scans a string and returns the bounds of its contents; plain means
// they are their own decoded value (no escapes, valid UTF-8).
func (s *argScanner) str() (a, b int, plain bool) {
	d := s.data
	i := s.pos + 1
	escaped, high := false, false
	for {
		for i < len(d) && d[i] >= 0x20 && d[i] < 0x80 && d[i] != '"' && d[i] != '\\' {
			i++
		}
		if i >= len(d) {
			s.bad = true
			return 0, 0, false
		}
		switch c := d[i]; {
		case c == '"':
			a, b = s.pos+1, i
			s.pos = i + 1
			return a, b, !escaped && (!high || utf8.Valid(d[a:b]))
		case c == '\\':
			escaped = true
			if i+1 >= len(d) {
				s.bad = true
				return 0, 0, false
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(d)-i < 6 || !isHex(d[i+2]) || !isHex(d[i+3]) || !isHex(d[i+4]) || !isHex(d[i+5]) {
					s.bad = true
					return 0, 0, false
				}
				i += 6
			default:
				s.bad = true
				return 0, 0, false
			}
		case c < 0x20:
			s.bad = true
			return 0, 0, false
		default:
			high = true
			i++
		}
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// decode returns the decoded value of the string whose contents str
// bounded. A string with escapes or invalid UTF-8 (rare in names and
// constrained values) is decoded by encoding/json itself.
func (s *argScanner) decode(a, b int, plain bool) []byte {
	if plain {
		return s.data[a:b]
	}
	var v string
	if json.Unmarshal(s.data[a-1:b+1], &v) != nil {
		s.bad = true // unreachable: str checked the syntax
		return nil
	}
	return []byte(v)
}

// array scans an array and validates it against n.
func (s *argScanner) array(n *vnode, depth int) *failure {
	s.pos++ // '['
	var items *vnode
	if n != nil {
		items = n.items
	}
	var first *failure
	count := 0
	s.ws()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
	} else {
		for {
			f := s.value(items, depth+1)
			if s.bad {
				return nil
			}
			if f != nil {
				first = f.at(pathSeg{idx: count})
				items = nil // the rest only needs to be valid JSON
			}
			count++
			end, ok := s.separator(']')
			if !ok {
				return nil
			}
			if end {
				break
			}
		}
	}
	if n == nil {
		return nil
	}
	l := float64(count)
	if n.has&hasMinItems != 0 && l < n.counts[2] {
		return &failure{rule: RuleMinItems, n: n}
	}
	if n.has&hasMaxItems != 0 && l > n.counts[3] {
		return &failure{rule: RuleMaxItems, n: n}
	}
	return first
}

// manyMembers is the member count past which an object's names are
// indexed by a map rather than searched.
const manyMembers = 16

// object scans an object and validates it against n.
func (s *argScanner) object(n *vnode, depth int) *failure {
	s.pos++ // '{'
	members := n != nil && (n.props != nil || n.noAddl || n.addl != nil)
	names := members || n != nil && len(n.required) > 0
	var buf [8]memberRec
	recs := buf[:0]
	var index map[string]int // name to recs index, past manyMembers
	s.ws()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
	} else {
		for {
			s.ws()
			if s.pos >= len(s.data) || s.data[s.pos] != '"' {
				s.bad = true
				return nil
			}
			a, b, plain := s.str()
			if s.bad {
				return nil
			}
			var name []byte
			if names {
				name = s.decode(a, b, plain)
			}
			s.ws()
			if s.pos >= len(s.data) || s.data[s.pos] != ':' {
				s.bad = true
				return nil
			}
			s.pos++
			var fail *failure
			var p *vnode
			ok := false
			if members {
				p, ok = n.props[string(name)]
			}
			switch {
			case ok:
				if f := s.value(p, depth+1); f != nil {
					fail = f.at(pathSeg{name: string(name), idx: -1})
				}
			case members && n.noAddl:
				s.value(nil, depth+1)
				fail = &failure{rule: RuleAdditionalProperty, n: n}
			case members && n.addl != nil:
				if s.value(n.addl, depth+1) != nil {
					fail = &failure{rule: RuleAdditionalProperty, n: n}
				}
			default:
				s.value(nil, depth+1)
			}
			if s.bad {
				return nil
			}
			if names {
				// A later duplicate replaces the earlier value.
				if i := findName(recs, name, index); i >= 0 {
					recs[i].fail = fail
				} else {
					recs = append(recs, memberRec{name: name, fail: fail})
					if index != nil {
						index[string(name)] = len(recs) - 1
					} else if len(recs) > manyMembers {
						index = make(map[string]int, 2*manyMembers)
						for i, m := range recs {
							index[string(m.name)] = i
						}
					}
				}
			}
			end, ok := s.separator('}')
			if !ok {
				return nil
			}
			if end {
				break
			}
		}
	}
	if n == nil {
		return nil
	}
	for _, r := range n.required {
		if !hasName(recs, r, index) {
			return (&failure{rule: RuleRequired, n: n}).at(pathSeg{name: r, idx: -1})
		}
	}
	// The failure of the failing member whose name sorts first.
	var first *memberRec
	for i := range recs {
		m := &recs[i]
		if m.fail != nil && (first == nil || bytes.Compare(m.name, first.name) < 0) {
			first = m
		}
	}
	if first == nil {
		return nil
	}
	return first.fail
}

// hasName reports whether one of recs is named name; index, if not nil,
// maps their names to their indexes.
func hasName(recs []memberRec, name string, index map[string]int) bool {
	if index != nil {
		_, ok := index[name]
		return ok
	}
	for i := range recs {
		if string(recs[i].name) == name {
			return true
		}
	}
	return false
}

// findName returns the index of the one of recs named name, or -1; index,
// if not nil, maps their names to their indexes.
func findName(recs []memberRec, name []byte, index map[string]int) int {
	if index != nil {
		if i, ok := index[string(name)]; ok {
			return i
		}
		return -1
	}
	for i := range recs {
		if string(recs[i].name) == string(name) {
			return i
		}
	}
	return -1
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

// separator reads, after optional whitespace, either the close byte of the
// array or object being scanned (end) or a ','. Anything else, or the end
// of the data, marks the scan bad and returns ok=false.
func (s *argScanner) separator(close byte) (end, ok bool) {
	s.ws()
	if s.pos >= len(s.data) {
		s.bad = true
		return false, false
	}
	c := s.data[s.pos]
	s.pos++
	if c == close {
		return true, true
	}
	if c != ',' {
		s.bad = true
		return false, false
	}
	return false, true
}
