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
				assert.NotContains(t, err.Error(), "nested", "the path (server names) stays out of the text")
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
