package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"testing"

	"github.com/mcpward/mcpward/ports"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// genNames are the property names random schemas and arguments share:
// plain, escaped in the arguments, non-ASCII, "\uFFFD" (what invalid
// UTF-8 and lone surrogates decode to) and ones sorting around each other.
var genNames = []string{"a", "b", "aa", "ab", "é", "\uFFFD", "a/b", "~", "ba"}

// genSchema returns a random schema in the narrowed subset.
func genSchema(r *rand.Rand, depth int) map[string]any {
	m := map[string]any{}
	types := []string{"null", "boolean", "object", "array", "number", "string", "integer"}
	switch r.IntN(8) {
	case 0:
		m["type"] = types[r.IntN(len(types))]
	case 1:
		m["type"] = []any{types[r.IntN(len(types))], types[r.IntN(len(types))]}
	}
	if depth < 4 && r.IntN(2) == 0 {
		props := map[string]any{}
		for range r.IntN(4) {
			props[genNames[r.IntN(len(genNames))]] = genSchema(r, depth+1)
		}
		m["properties"] = props
	}
	if r.IntN(3) == 0 {
		var req []any
		for range 1 + r.IntN(2) {
			req = append(req, genNames[r.IntN(len(genNames))])
		}
		m["required"] = req
	}
	switch r.IntN(5) {
	case 0:
		m["additionalProperties"] = false
	case 1:
		m["additionalProperties"] = true
	case 2:
		if depth < 4 {
			m["additionalProperties"] = genSchema(r, depth+1)
		}
	}
	if depth < 4 && r.IntN(3) == 0 {
		m["items"] = genSchema(r, depth+1)
	}
	if r.IntN(10) == 0 {
		var e []any
		for range 1 + r.IntN(3) {
			e = append(e, genConst(r, 0))
		}
		m["enum"] = e
	}
	if r.IntN(14) == 0 {
		m["const"] = genConst(r, 0)
	}
	for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
		if r.IntN(6) == 0 {
			m[k] = []float64{0, 1, -1, 2.5, 1e300, 10}[r.IntN(6)]
		}
	}
	for _, k := range []string{"minLength", "maxLength", "minItems", "maxItems"} {
		if r.IntN(6) == 0 {
			m[k] = float64(r.IntN(4))
		}
	}
	if r.IntN(6) == 0 {
		m["pattern"] = []string{"^a", "b$", "^.$", "\uFFFD", "^[^a]*$", "é"}[r.IntN(6)]
	}
	return m
}

// genConst returns a random enum or const value.
func genConst(r *rand.Rand, depth int) any {
	switch r.IntN(8) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return genNames[r.IntN(len(genNames))]
	case 3, 4:
		return []float64{0, 1, 2, 1.5, -1, 1e300}[r.IntN(6)]
	case 5:
		if depth < 2 {
			return []any{genConst(r, depth+1)}
		}
	case 6:
		if depth < 2 {
			return map[string]any{genNames[r.IntN(len(genNames))]: genConst(r, depth+1)}
		}
	}
	return "x"
}

// genArgs appends a random JSON value, mostly valid, using the names and
// values schemas use, in several spellings.
func genArgs(r *rand.Rand, b []byte, depth int) []byte {
	ws := func(b []byte) []byte {
		if r.IntN(8) == 0 {
			return append(b, " \t\n\r"[r.IntN(4)])
		}
		return b
	}
	b = ws(b)
	k := r.IntN(10)
	if depth == 0 && r.IntN(8) != 0 {
		k = 0
	}
	if depth > 4 && k < 2 {
		k = 2
	}
	switch k {
	case 0:
		b = append(b, '{')
		for i := range r.IntN(5) {
			if i > 0 {
				b = append(b, ',')
			}
			b = ws(genString(r, b, genNames[r.IntN(len(genNames))]))
			b = append(b, ':')
			b = genArgs(r, b, depth+1)
		}
		b = append(b, '}')
	case 1:
		b = append(b, '[')
		for i := range r.IntN(5) {
			if i > 0 {
				b = append(b, ',')
			}
			b = genArgs(r, b, depth+1)
		}
		b = append(b, ']')
	case 2, 3:
		nums := []string{"0", "-0", "1", "1.0", "1.5", "-1", "2.5", "25e-1", "1e400", "-1e400", "1e-400", "10", "1E+1",
			"0.5", "2.50e1", "12345678901234567890123", "9007199254740993", "1e999999999999999999999", "0e-999999999999999999", "3"}
		b = append(b, nums[r.IntN(len(nums))]...)
	case 4, 5:
		s := []string{"", "a", "ab", "abc", "ba", "x", "é", "\uFFFD", "a/b", "aé", "\xff", "a\xffb"}[r.IntN(12)]
		b = genString(r, b, s)
	case 6:
		b = append(b, "true"...)
	case 7:
		b = append(b, "false"...)
	case 8:
		b = append(b, "null"...)
	case 9:
		b = genString(r, b, genNames[r.IntN(len(genNames))])
	}
	return ws(b)
}

// genString appends s as a JSON string, spelled plainly or with escapes
// (and "\uFFFD" sometimes as a lone surrogate or invalid UTF-8).
func genString(r *rand.Rand, b []byte, s string) []byte {
	b = append(b, '"')
	if s == "\uFFFD" {
		b = append(b, []string{`\ud800`, "\xff", "\uFFFD", `\uFFFD`, `\udc00`, `\ud800\u0061`}[r.IntN(6)]...)
		return append(b, '"')
	}
	for _, c := range []byte(s) {
		switch r.IntN(6) {
		case 0:
			b = fmt.Appendf(b, `\u%04x`, c)
		default:
			if c == '"' || c == '\\' {
				b = append(b, '\\')
			}
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// genDeep returns arguments nested around MaxArgumentDepth deep,
// sometimes corrupted.
func genDeep(r *rand.Rand) []byte {
	n := MaxArgumentDepth - 3 + r.IntN(6)
	b := []byte(`{"a":`)
	var closers []byte
	for range n - 1 {
		if r.IntN(2) == 0 {
			b = append(b, '[')
			closers = append(closers, ']')
		} else {
			b = append(b, `{"\"[":`...)
			closers = append(closers, '}')
		}
	}
	b = genArgs(r, b, 5)
	for i := len(closers) - 1; i >= 0; i-- {
		b = append(b, closers[i])
	}
	b = append(b, '}')
	if r.IntN(2) == 0 {
		b = corrupt(r, b)
	}
	return b
}

// corrupt makes a random small edit.
func corrupt(r *rand.Rand, b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	i := r.IntN(len(b))
	switch r.IntN(3) {
	case 0:
		return append(b[:i:i], b[i+1:]...)
	case 1:
		c := "{}[]\",:\\ 0e-.tu\x00\xff"[r.IntN(17)]
		return append(append(b[:i:i], c), b[i:]...)
	default:
		b = bytes.Clone(b)
		b[i] = "{}[]\",:\\ 0e-.tu\x00\xff"[r.IntN(17)]
		return b
	}
}

// FuzzCheckArgsDifferential compares checkArgs with the validator it
// replaced (oldCheckArgs: encoding/json decoding, then a walk of the
// value) on random schemas and arguments: both must report the same
// failure (rule and path) or both none. seed drives a random schema and,
// in most modes, random arguments (mostly valid, some corrupted); in the
// others the fuzzer's raw bytes are the arguments.
func FuzzCheckArgsDifferential(f *testing.F) {
	f.Add([]byte("1"), []byte(`{}`), byte(0))
	f.Add([]byte("2"), []byte(`{"a":1,"a":"x"}`), byte(3))
	f.Add([]byte("3"), []byte(`{"a":"\ud800","\u00e9":[1e400]}`), byte(3))
	f.Add([]byte("4"), []byte(`{"a":1} x`), byte(1))
	f.Fuzz(func(t *testing.T, seed, raw []byte, mode byte) {
		h := fnv.New64a()
		h.Write(seed)
		r := rand.New(rand.NewPCG(h.Sum64(), uint64(mode)))
		schema, err := json.Marshal(genSchema(r, 0))
		require.NoError(t, err)
		root, err := compileSchema(schema)
		require.NoError(t, err)
		var args []byte
		switch mode % 5 {
		case 0, 1:
			args = genArgs(r, nil, 0)
		case 2:
			args = corrupt(r, genArgs(r, nil, 0))
		case 3:
			args = genDeep(r)
		default:
			args = raw
		}
		got, want := checkArgs(args, root), oldCheckArgs(args, root)
		if want == nil {
			require.Nil(t, got, "schema %s args %q: new failed %v", schema, args, got)
			return
		}
		require.NotNil(t, got, "schema %s args %q: old failed %s %s", schema, args, want.rule, want.path())
		require.Equal(t, want.rule+" "+want.path(), got.rule+" "+got.path(), "schema %s args %q", schema, args)
	})
}

// TestCheckArgsDifferential runs the differential comparison on a fixed
// number of random cases, so that plain go test covers it too.
func TestCheckArgsDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fails := 0
	rules := map[string]int{}
	for i := range 20000 {
		schema, err := json.Marshal(genSchema(r, 0))
		require.NoError(t, err)
		root, err := compileSchema(schema)
		require.NoError(t, err)
		var args []byte
		switch i % 4 {
		case 0:
			args = corrupt(r, genArgs(r, nil, 0))
		case 1:
			args = genDeep(r)
		default:
			args = genArgs(r, nil, 0)
		}
		got, want := checkArgs(args, root), oldCheckArgs(args, root)
		if want != nil {
			fails++
			rules[want.rule]++
		}
		if want == nil {
			require.Nil(t, got, "schema %s args %q: new failed %v", schema, args, got)
			continue
		}
		require.NotNil(t, got, "schema %s args %q: old failed %s %s", schema, args, want.rule, want.path())
		require.Equal(t, want.rule+" "+want.path(), got.rule+" "+got.path(), "schema %s args %q", schema, args)
	}
	// Both outcomes are exercised.
	assert.Greater(t, fails, 2000)
	assert.Less(t, fails, 18000)
	for _, rule := range []string{RuleInvalidJSON, RuleTooDeep, RuleType, RuleRequired, RuleAdditionalProperty, RuleEnum, RuleConst,
		RuleMinimum, RuleMaximum, RuleExclusiveMinimum, RuleExclusiveMaximum, RuleMinLength, RuleMaxLength, RuleMinItems, RuleMaxItems, RulePattern} {
		assert.Positive(t, rules[rule], "no case failed with %s", rule)
	}
	t.Log(rules)
}

// BenchmarkValidate validates realistic arguments (five properties, a
// nested object and an array; see realisticToolsJSON) against their
// tool's compiled schema, with the old decode-then-walk validator and
// with checkArgs.
func BenchmarkValidate(b *testing.B) {
	cat := Build("store", ports.SessionIdentity{}, Lists{Tools: decodeTools(b, realisticToolsJSON(1, false))}, &fakeCaller{}, nil)
	root, err := cat.Tools[0].inputValidator()
	require.NoError(b, err)
	args := []byte(`{"path":"/data/records","limit":50,"recursive":true,"options":{"encoding":"utf-8","follow":false},"tags":["a","b"]}`)
	for _, impl := range []struct {
		name  string
		check func([]byte, *vnode) *failure
	}{{"old", oldCheckArgs}, {"new", checkArgs}} {
		b.Run(impl.name, func(b *testing.B) {
			require.Nil(b, impl.check(args, root))
			b.ReportAllocs()
			for b.Loop() {
				if impl.check(args, root) != nil {
					b.Fatal("refused")
				}
			}
		})
	}
}
