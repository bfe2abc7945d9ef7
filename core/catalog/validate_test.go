package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
)

const validateSchema = `{
	"type": "object",
	"additionalProperties": false,
	"required": ["path", "filter"],
	"properties": {
		"path": {"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^/"},
		"filter": {"anyOf": [{"type": "string"}, {"type": "number"}]},
		"limit": {"type": "integer", "minimum": 1, "maximum": 10},
		"ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
		"mode": {"enum": ["r", "w", 1, null, {"a": [1]}]},
		"kind": {"const": "file"},
		"opt": {"type": ["string", "null"]},
		"flag": {"type": "boolean"},
		"tags": {"type": "array", "items": {"type": "string", "maxLength": 3}, "minItems": 1, "maxItems": 2},
		"list": {"type": "array", "items": {"$ref": "#/x"}},
		"a/b": {"type": "object", "properties": {"in~": {"type": "integer"}}, "required": ["deep"]},
		"nested": {"type": "object", "additionalProperties": false, "properties": {
			"rows": {"type": "array", "items": {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}}}}},
		"meta": {"type": "object", "additionalProperties": {"type": "string"}}
	}
}`

func TestValidate(t *testing.T) {
	const base = `"path":"/a","filter":[1,{"x":true}]`
	tests := []struct {
		name string
		args string
		path string // "" means valid
		rule string
	}{
		{"minimal", `{` + base + `}`, "", ""},
		{"narrowed property accepts anything, even under additionalProperties false", `{"path":"/","filter":{"deep":[null]}}`, "", ""},
		{"narrowed array items accept anything", `{` + base + `,"list":[1,"x",{},[]]}`, "", ""},
		{"every property valid", `{` + base + `,"limit":10,"ratio":0.5,"mode":{"a":[1.0]},"kind":"file","opt":null,"flag":false,` +
			`"tags":["abc"],"a/b":{"deep":1,"in~":3},"nested":{"rows":[{"id":1},{"id":2e0}]},"meta":{"k":"v"}}`, "", ""},
		{"not an object", `[1]`, "/", RuleType},
		{"string args", `"x"`, "/", RuleType},
		{"null args", `null`, "/", RuleType},
		{"invalid JSON", `{"path":`, "/", RuleInvalidJSON},
		{"trailing data", `{` + base + `} {}`, "/", RuleInvalidJSON},
		{"missing required", `{"path":"/a"}`, "/filter", RuleRequired},
		{"missing required is checked even when narrowed", `{"filter":1}`, "/path", RuleRequired},
		{"unexpected property names its object only", `{` + base + `,"secret-name":1}`, "/", RuleAdditionalProperty},
		{"wrong type", `{"path":5,"filter":1}`, "/path", RuleType},
		{"min length", `{"path":"","filter":1}`, "/path", RuleMinLength},
		{"max length counts characters", `{"path":"/ééé","filter":1}`, "", ""},
		{"max length", `{"path":"/abcde","filter":1}`, "/path", RuleMaxLength},
		{"pattern", `{"path":"abc","filter":1}`, "/path", RulePattern},
		{"integer", `{` + base + `,"limit":1.5}`, "/limit", RuleType},
		{"integer 2.0 is an integer", `{` + base + `,"limit":2.0}`, "", ""},
		{"integer 1e1 is an integer", `{` + base + `,"limit":1e1}`, "", ""},
		{"minimum", `{` + base + `,"limit":0}`, "/limit", RuleMinimum},
		{"maximum", `{` + base + `,"limit":11}`, "/limit", RuleMaximum},
		{"exclusive minimum", `{` + base + `,"ratio":0}`, "/ratio", RuleExclusiveMinimum},
		{"exclusive maximum", `{` + base + `,"ratio":1}`, "/ratio", RuleExclusiveMaximum},
		{"huge number", `{` + base + `,"ratio":1e400}`, "/ratio", RuleExclusiveMaximum},
		{"enum", `{` + base + `,"mode":"x"}`, "/mode", RuleEnum},
		{"enum number compares by value", `{` + base + `,"mode":1.0}`, "", ""},
		{"enum object", `{` + base + `,"mode":{"a":[2]}}`, "/mode", RuleEnum},
		{"enum null", `{` + base + `,"mode":null}`, "", ""},
		{"const", `{` + base + `,"kind":"dir"}`, "/kind", RuleConst},
		{"type array", `{` + base + `,"opt":1}`, "/opt", RuleType},
		{"boolean", `{` + base + `,"flag":"true"}`, "/flag", RuleType},
		{"array items", `{` + base + `,"tags":["abc","abcd"]}`, "/tags/1", RuleMaxLength},
		{"min items", `{` + base + `,"tags":[]}`, "/tags", RuleMinItems},
		{"max items", `{` + base + `,"tags":["a","b","c"]}`, "/tags", RuleMaxItems},
		{"escaped names in path", `{` + base + `,"a/b":{"deep":1,"in~":"x"}}`, "/a~1b/in~0", RuleType},
		{"nested required", `{` + base + `,"a/b":{}}`, "/a~1b/deep", RuleRequired},
		{"nested array of objects", `{` + base + `,"nested":{"rows":[{"id":1},{"id":"2"}]}}`, "/nested/rows/1/id", RuleType},
		{"nested required in array", `{` + base + `,"nested":{"rows":[{}]}}`, "/nested/rows/0/id", RuleRequired},
		{"nested additional property", `{` + base + `,"nested":{"rows":[],"x":1}}`, "/nested", RuleAdditionalProperty},
		{"additionalProperties schema", `{` + base + `,"meta":{"k":"v","hidden":1}}`, "/meta", RuleAdditionalProperty},
		{"first failure in key order", `{"path":5,"filter":1,"limit":0,"aa":1}`, "/", RuleAdditionalProperty},
		{"first failure in key order 2", `{"path":5,"filter":1,"limit":0}`, "/limit", RuleMinimum},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &fakeCaller{res: okResult}
			tool := oneTool(t, validateSchema, c, nil)
			// Repeat: the first call compiles the validator, the second
			// uses it.
			for range 2 {
				_, err := tool.Call(context.Background(), json.RawMessage(tt.args))
				if tt.path == "" {
					require.NoError(t, err)
					continue
				}
				var ae *ArgumentError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, tt.path, ae.Path)
				assert.Equal(t, tt.rule, ae.Rule)
				assert.Equal(t, refusal.Config, refusal.ClassOf(err))
				assert.Equal(t, ReasonInvalidArguments, refusal.ReasonOf(err))
				assert.True(t, errors.Is(err, refusal.New(refusal.Config, ReasonInvalidArguments, "")))
				assert.NotContains(t, err.Error(), "secret-name")
				// The path (the server's names) leads the detail, so every
				// surface that prints the refusal says where (#25 item 6).
				var re *refusal.Error
				require.ErrorAs(t, err, &re)
				if tt.path == "/" {
					assert.True(t, strings.HasPrefix(re.Detail, tt.rule+": "), re.Detail)
				} else {
					assert.True(t, strings.HasPrefix(re.Detail, tt.path+": "+tt.rule+": "), re.Detail)
				}
			}
			if tt.path != "" {
				assert.Empty(t, c.requests(), "an invalid call left the process")
			} else {
				assert.Len(t, c.requests(), 2)
			}
		})
	}
}

func TestValidateLimits(t *testing.T) {
	tool := oneTool(t, `{"type":"object"}`, &fakeCaller{res: okResult}, nil)
	tests := []struct {
		name string
		args string
		rule string
	}{
		{"deep nesting", `{"a":` + strings.Repeat("[", MaxArgumentDepth) + strings.Repeat("]", MaxArgumentDepth) + `}`, RuleTooDeep},
		{"brackets inside strings do not count", `{"a":"` + strings.Repeat("[{", MaxArgumentDepth) + `"}`, ""},
		{"escaped quote inside string", `{"a":"\"[[[[","b":` + strings.Repeat("[", MaxArgumentDepth-1) + strings.Repeat("]", MaxArgumentDepth-1) + `}`, ""},
		{"too large", `{"a":"` + strings.Repeat("x", MaxArgumentBytes) + `"}`, RuleTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tool.Call(context.Background(), json.RawMessage(tt.args))
			if tt.rule == "" {
				require.NoError(t, err)
				return
			}
			var ae *ArgumentError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, "/", ae.Path)
			assert.Equal(t, tt.rule, ae.Rule)
		})
	}
}

func TestIntegerLiteral(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "-0": true, "1": true, "-12": true, "1.0": true, "1.50": false, "1.5": false,
		"1e3": true, "1E+3": true, "1.5e1": true, "1.25e1": false, "1.25e2": true, "12e-1": false, "120e-1": true,
		"100e-2": true, "100e-3": false, "0.0e-5": true, "0e999999999999999999999": true, "1e999999999999999999999": true,
		"1e-999999999999999999999": false, "0.001e3": true, "0.0015e3": false, "5e-1": false,
	} {
		assert.Equal(t, want, integerLiteral(s), s)
	}
}

// FuzzValidate feeds arbitrary schemas and arguments through Narrow, Build
// and Tool.Call: nothing panics, a refusal is always an *ArgumentError,
// and the accepts-anything schema accepts every JSON object.
func FuzzValidate(f *testing.F) {
	f.Add([]byte(validateSchema), []byte(`{"path":"/a","filter":1}`))
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"integer","minimum":1}}}`), []byte(`{"a":1e400}`))
	f.Add([]byte(`{"properties":{"a":{"enum":[{"b":[1]}]}}}`), []byte(`{"a":{"b":[1.0]}}`))
	f.Add([]byte(`{"additionalProperties":{"items":{"pattern":"^a"}}}`), []byte(`{"x":["a","b"]}`))
	f.Add([]byte(`{}`), []byte(`{"a":[[[{"b":null}]]]}`))
	f.Fuzz(func(t *testing.T, schema, args []byte) {
		var s any
		if json.Unmarshal(schema, &s) == nil {
			if m, ok := s.(map[string]any); ok && (m["type"] == nil || m["type"] == any("object")) {
				tool := oneTool(t, string(schema), &fakeCaller{res: okResult}, nil)
				_, err := tool.Call(context.Background(), args)
				if err != nil {
					var ae *ArgumentError
					require.ErrorAs(t, err, &ae)
					require.NotEmpty(t, ae.Path)
					require.NotEmpty(t, ae.Rule)
				}
			}
		}
		anyTool := oneTool(t, `{}`, &fakeCaller{res: okResult}, nil)
		_, err := anyTool.Call(context.Background(), args)
		var v any
		isObject := json.Unmarshal(args, &v) == nil && len(args) <= MaxArgumentBytes && depthOf(args) <= MaxArgumentDepth
		if _, ok := v.(map[string]any); ok && isObject {
			require.NoError(t, err, "the empty schema refused an object")
		}
		if len(strings.TrimSpace(string(args))) == 0 {
			require.NoError(t, err, "empty arguments are {}")
		}
	})
}

// depthOf returns the nesting depth of valid JSON.
func depthOf(b []byte) int {
	var walk func(v any) int
	walk = func(v any) int {
		d := 0
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				d = max(d, walk(e))
			}
			return d + 1
		case map[string]any:
			for _, e := range x {
				d = max(d, walk(e))
			}
			return d + 1
		}
		return 0
	}
	var v any
	_ = json.Unmarshal(b, &v)
	return walk(v)
}

// TestCheckArgsEdges pins what checkArgs does with the inputs where a
// hand-written scanner could most easily part from encoding/json, and
// checks that the old decode-then-walk validator agrees.
func TestCheckArgsEdges(t *testing.T) {
	const schema = `{"type":"object","additionalProperties":false,"required":["a"],"properties":{
		"a":{"type":"integer","maximum":5},"b":{"type":"string","maxLength":1,"pattern":"^.$"},
		"é":{"enum":["\ufffd",[1]]},"\ufffd":{"type":"null"},"c":{"type":"array","items":{"type":"object"}}}}`
	root, err := compileSchema([]byte(schema))
	require.NoError(t, err)
	deep := strings.Repeat("[", MaxArgumentDepth) + strings.Repeat("]", MaxArgumentDepth)
	tests := []struct {
		name, args, path, rule string
	}{
		{"valid", `{"a":1}`, "", ""},
		{"whitespace around", " \t\r\n{\"a\":1} \n", "", ""},
		{"duplicate: the last value counts", `{"a":"x","a":1}`, "", ""},
		{"duplicate: the last value fails", `{"a":1,"a":"x"}`, "/a", RuleType},
		{"duplicate: an earlier value must be valid JSON", `{"a":[,"a":1}`, "/", RuleInvalidJSON},
		{"escaped name", `{"\u0061":1}`, "", ""},
		{"invalid UTF-8 name is U+FFFD", "{\"a\":1,\"\xff\":null}", "", ""},
		{"lone surrogate name is U+FFFD", `{"a":1,"\ud800":1}`, "/\ufffd", RuleType},
		{"invalid UTF-8 in a value is U+FFFD", "{\"a\":1,\"é\":\"\xff\"}", "", ""},
		{"one character per invalid byte", "{\"a\":1,\"b\":\"\xff\xfe\"}", "/b", RuleMaxLength},
		{"escaped string value", `{"a":1,"b":"\u00e9"}`, "", ""},
		{"composite enum", `{"a":1,"é":[1.0]}`, "", ""},
		{"composite enum fails", `{"a":1,"é":[2]}`, "/é", RuleEnum},
		{"integer from the literal", `{"a":5.000e0}`, "", ""},
		{"not an integer", `{"a":12345678901234567890.5}`, "/a", RuleType},
		{"1e400 is past every maximum", `{"a":1e400}`, "/a", RuleMaximum},
		{"-1e400", `{"a":-1e400}`, "", ""},
		{"trailing value", `{"a":1} {}`, "/", RuleInvalidJSON},
		{"trailing garbage", `{"a":1}x`, "/", RuleInvalidJSON},
		{"trailing comma", `{"a":1,}`, "/", RuleInvalidJSON},
		{"control character in a string", "{\"a\":1,\"b\":\"\x01\"}", "/", RuleInvalidJSON},
		{"bad escape", `{"a":1,"b":"\x"}`, "/", RuleInvalidJSON},
		{"short unicode escape", `{"a":1,"b":"\u12"}`, "/", RuleInvalidJSON},
		{"leading zero", `{"a":01}`, "/", RuleInvalidJSON},
		{"bare minus", `{"a":-}`, "/", RuleInvalidJSON},
		{"empty", ``, "/", RuleInvalidJSON},
		{"not an object", `[{"a":1}]`, "/", RuleType},
		{"invalid JSON beats a schema failure", `{"zz":1,"a":`, "/", RuleInvalidJSON},
		{"first failing name in order", `{"b":"xy","a":"x","c":[1]}`, "/a", RuleType},
		{"required before members", `{"zz":1}`, "/a", RuleRequired},
		{"additional property at the object", `{"a":1,"zz":1}`, "/", RuleAdditionalProperty},
		{"array item path", `{"a":1,"c":[{},{},3]}`, "/c/2", RuleType},
		{"as deep as allowed", `{"a":1,"c":[{"x":` + deep[3:len(deep)-3] + `}]}`, "", ""},
		{"too deep", `{"a":1,"c":[{"x":` + deep + `}]}`, "/", RuleTooDeep},
		{"too deep and invalid", `{"a":` + deep[:MaxArgumentDepth] + `x`, "/", RuleTooDeep},
		{"too deep past a syntax error", `x[` + deep, "/", RuleTooDeep},
		{"closing brackets lower the count", `}` + deep, "/", RuleInvalidJSON},
		{"brackets in strings do not count", `{"a":1,"b":"` + deep + `"}`, "/b", RuleMaxLength},
		{"many members and a duplicate", `{"a":"x",` + strings.Repeat(`"\ufffd":null,`, 40) + `"a":1}`, "", ""},
		{"too large", `{"a":"` + strings.Repeat("x", MaxArgumentBytes) + `"}`, "/", RuleTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for impl, check := range map[string]func([]byte, *vnode) *failure{"new": checkArgs, "old": oldCheckArgs} {
				f := check([]byte(tt.args), root)
				if tt.rule == "" {
					assert.Nil(t, f, impl)
					continue
				}
				if assert.NotNil(t, f, impl) {
					assert.Equal(t, tt.rule, f.rule, impl)
					assert.Equal(t, tt.path, f.path(), impl)
				}
			}
		})
	}
}

// TestValidJSON checks validJSON against json.Valid, among them the inputs
// the scanner refuses and json.Valid decides.
func TestValidJSON(t *testing.T) {
	deeper := strings.Repeat("[", MaxArgumentDepth+1) + strings.Repeat("]", MaxArgumentDepth+1)
	tooDeepForJSON := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	for _, in := range []string{
		`[]`, ` [{"type":"text","text":"a"}] `, `{}`, `"s"`, `1`, `null`, ``, ` `, `[`, `[1,]`, `[1] x`,
		`[1][2]`, "[\"\x01\"]", "[\"\xff\"]", `["\ud800"]`, `[01]`, `[-]`, `[1e400]`,
		deeper, `[` + deeper + `,{"a":` + deeper + `}]`, deeper + `x`, tooDeepForJSON,
	} {
		assert.Equal(t, json.Valid([]byte(in)), validJSON([]byte(in)), "%.40q", in)
	}
}

// FuzzValidJSON checks that validJSON reports exactly what json.Valid does.
func FuzzValidJSON(f *testing.F) {
	for _, seed := range []string{`[{"type":"text","text":"a"}]`, `[[[[]]]]`, `{"a":[1,2,{"b":null}]}`, `[1,]`, "\"\xff\"", ` `} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}

// TestArgumentDetailPathIsSafe: a property name the server chose reaches
// Detail escaped under core/textsafe's rule and cut, never raw; no
// argument value is ever part of it.
func TestArgumentDetailPathIsSafe(t *testing.T) {
	long := strings.Repeat("p", 400)
	name := `a\u001b]52;c;x\u0007b`
	schema := `{"type":"object","properties":{"` + name + `":{"type":"object","properties":{"` + long + `":{"type":"integer"}}}},"required":["` + name + `"]}`
	tool := oneTool(t, schema, &fakeCaller{res: okResult}, nil)
	for _, args := range []string{`{}`, `{"` + name + `":{"` + long + `":"value-secret-42"}}`} {
		_, err := tool.Call(context.Background(), json.RawMessage(args))
		var re *refusal.Error
		require.ErrorAs(t, err, &re, args)
		assert.True(t, strings.HasPrefix(re.Detail, `/a\x1b]52;c;x\x07b`), re.Detail)
		assert.NotContains(t, re.Detail, "value-secret-42")
		assert.Equal(t, -1, strings.IndexFunc(re.Detail, func(r rune) bool { return r < 0x20 || r == 0x7f }), "no control character: %q", re.Detail)
		assert.LessOrEqual(t, len(re.Detail), MaxDetailPath+80)
	}
}
