package catalog

import (
	"strconv"
	"strings"

	"github.com/mcpward/mcpward/core/textsafe"
)

// MaxDetailPath is how many bytes of an argument error's JSON pointer its
// refusal's Detail keeps (ArgumentError.Path keeps it whole).
const MaxDetailPath = 256

// typeWords are the JSON Schema type names in the order Expected lists
// them.
var typeWords = [...]struct {
	bit  uint8
	name string
}{
	{tObject, "object"}, {tArray, "array"}, {tString, "string"},
	{tNumber, "number"}, {tInteger, "integer"}, {tBoolean, "boolean"}, {tNull, "null"},
}

// typeNames renders a type set as "number", "string or null", ...
// "number" covers "integer".
func typeNames(types uint8) string {
	var names []string
	for _, w := range typeWords {
		if types&w.bit == 0 || w.bit == tInteger && types&tNumber != 0 {
			continue
		}
		names = append(names, w.name)
	}
	return strings.Join(names, " or ")
}

// kindName is the type of a value from its type bit.
func kindName(k uint8) string {
	for _, w := range typeWords {
		if w.bit == k {
			return w.name
		}
	}
	return "value"
}

// kindOf returns the type bit of the JSON value b starts with (after
// whitespace), judged by its first byte; 0 when b is empty.
func kindOf(b []byte) uint8 {
	b = trimSpace(b)
	if len(b) == 0 {
		return 0
	}
	switch c := b[0]; {
	case c == '{':
		return tObject
	case c == '[':
		return tArray
	case c == '"':
		return tString
	case c == 't' || c == 'f':
		return tBoolean
	case c == 'n':
		return tNull
	default:
		return tNumber
	}
}

// formatBound renders a schema bound (a number from the schema, never
// from the value).
func formatBound(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// expectation returns what the value at f's path should have been and,
// for RuleType, what type it was: words built from the rule and the
// schema's bounds and type names, never from the value itself (its type
// aside), so they are as secret-free as the rule.
func (f *failure) expectation() (expected, got string) {
	n := f.n
	if n == nil {
		n = &vnode{}
	}
	switch f.rule {
	case RuleInvalidJSON:
		return "one JSON object", ""
	case RuleTooLarge:
		return "at most " + strconv.Itoa(MaxArgumentBytes) + " bytes", ""
	case RuleTooDeep:
		return "at most " + strconv.Itoa(MaxArgumentDepth) + " levels of nesting", ""
	case RuleType:
		want := typeNames(n.types)
		if want == "" {
			want = "object"
		}
		got := kindName(f.k)
		if f.k == tNumber && n.types&tInteger != 0 {
			got = "non-integer number"
		}
		return want, got
	case RuleRequired:
		return "a value (the property is required)", "none"
	case RuleAdditionalProperty:
		return "only the properties the schema allows", ""
	case RuleEnum:
		return "one of the " + strconv.Itoa(len(n.enum)) + " allowed values", ""
	case RuleConst:
		return "the schema's constant value", ""
	case RuleMinimum:
		return "a number >= " + formatBound(n.num[0]), ""
	case RuleMaximum:
		return "a number <= " + formatBound(n.num[1]), ""
	case RuleExclusiveMinimum:
		return "a number > " + formatBound(n.num[2]), ""
	case RuleExclusiveMaximum:
		return "a number < " + formatBound(n.num[3]), ""
	case RuleMinLength:
		return "at least " + formatBound(n.counts[0]) + " characters", ""
	case RuleMaxLength:
		return "at most " + formatBound(n.counts[1]) + " characters", ""
	case RuleMinItems:
		return "at least " + formatBound(n.counts[2]) + " items", ""
	case RuleMaxItems:
		return "at most " + formatBound(n.counts[3]) + " items", ""
	case RulePattern:
		return "a string matching the schema's pattern", ""
	}
	return "", ""
}

// explanation renders "expected X, got Y" (or "expected X").
func explanation(expected, got string) string {
	if got == "" {
		return "expected " + expected
	}
	return "expected " + expected + ", got " + got
}

// explain renders "<path>: expected X, got Y".
func explain(path, expected, got string) string {
	return path + ": " + explanation(expected, got)
}

// pathDetail is an argument error's Detail: "<path>: <what>", the path
// escaped (its names are the server's) and cut to MaxDetailPath bytes;
// just what when the path is the arguments themselves ("/").
func pathDetail(path, what string) string {
	if path == "/" || path == "" {
		return what
	}
	return textsafe.Fit(path, MaxDetailPath, false) + ": " + what
}

// Bounds of the names an argument error's Detail lists.
const (
	// maxDetailName is how many bytes of one name Detail keeps.
	maxDetailName = textsafe.MinClip
	// maxDetailNames is how many names Detail lists.
	maxDetailNames = 8
)

// detailName is a name the server declared, quoted for Detail: escaped
// under core/textsafe's rule and cut to maxDetailName bytes.
func detailName(name string) string {
	return `"` + textsafe.Fit(name, maxDetailName, false) + `"`
}

// declaredNames renders "<lead> a, b and c" (at most maxDetailNames
// names, then "and N more"), or "<lead> none".
func declaredNames(lead string, names []string) string {
	if len(names) == 0 {
		return lead + " none"
	}
	var q []string
	for i, n := range names {
		if i == maxDetailNames {
			q = append(q, strconv.Itoa(len(names)-i)+" more")
			break
		}
		q = append(q, detailName(n))
	}
	if len(q) == 1 {
		return lead + " " + q[0]
	}
	return lead + " " + strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}
