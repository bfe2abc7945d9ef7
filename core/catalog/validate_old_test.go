package catalog

// The validator as it was before checkArgs: decode the arguments into
// any with encoding/json, then walk the decoded value. Kept, test-only,
// as the reference FuzzCheckArgsDifferential compares checkArgs against
// and as the baseline of BenchmarkValidate.

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"
)

// oldCheckArgs is what Tool.Call did with decodeArgs and validate.
func oldCheckArgs(args []byte, root *vnode) *failure {
	inst, f := oldDecodeArgs(args)
	if f == nil {
		if _, ok := inst.(map[string]any); !ok {
			f = &failure{rule: RuleType}
		} else {
			f = root.oldValidate(inst)
		}
	}
	return f
}

// oldDecodeArgs checks a call's arguments against the size and depth limits
// and decodes them, numbers as json.Number.
func oldDecodeArgs(args []byte) (any, *failure) {
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

// oldKind returns the type bits of a decoded instance.
func oldKind(v any) uint8 {
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

// oldValidate checks v against n and returns the first failure, or nil.
// Object members are visited in key order, so the failure reported is
// deterministic.
func (n *vnode) oldValidate(v any) *failure {
	k := oldKind(v)
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
				if f := n.items.oldValidate(el); f != nil {
					return f.at(pathSeg{idx: i})
				}
			}
		}
	case map[string]any:
		return n.oldValidateObject(x)
	}
	return nil
}

func (n *vnode) oldValidateObject(m map[string]any) *failure {
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
		if n.oldMember(k, v) != nil {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if f := n.oldMember(k, m[k]); f != nil {
					return f
				}
			}
		}
	}
	return nil
}

// oldMember validates the member k of an object. A failure of a property the
// schema names is reported under its name; an additional property is
// reported at the object itself, so a path never carries a name the
// arguments chose.
func (n *vnode) oldMember(k string, v any) *failure {
	if s, ok := n.props[k]; ok {
		if f := s.oldValidate(v); f != nil {
			return f.at(pathSeg{name: k, idx: -1})
		}
		return nil
	}
	if n.noAddl {
		return &failure{rule: RuleAdditionalProperty}
	}
	if n.addl != nil && n.addl.oldValidate(v) != nil {
		return &failure{rule: RuleAdditionalProperty}
	}
	return nil
}
