package catalog

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// walkerJSONCases are hand-written schemas, one per keyword class and
// edge: each narrowed as decoded and as raw bytes.
var walkerJSONCases = []struct{ name, in string }{
	{"type name", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"},"c":{"type":"null"}}}`},
	{"type array", `{"properties":{"a":{"type":["string","null"]},"b":{"type":["object"]}}}`},
	{"type invalid", `{"properties":{"a":{"type":"any"},"b":{"type":[]},"c":{"type":["string",1]},"d":{"type":5},"e":{"type":{"x":1}},"f":{"type":null}}}`},
	{"root type array", `{"type":["object","null"],"title":"T","properties":{"a":{}}}`},
	{"root type string", `{"type":"string","description":"D","default":"x","minLength":1}`},
	{"root not an object", `["type","object"]`},
	{"root string", `"object"`},
	{"root number", `1.5`},
	{"root null", `null`},
	{"root true", `true`},
	{"root $ref with siblings", `{"$ref":"#/$defs/a","$defs":{"a":{"type":"string"}},"title":"T","examples":[{"a":1}],"properties":{"x":{}}}`},
	{"root $dynamicRef", `{"$dynamicRef":"#x","type":"object"}`},
	{"root allOf dropped", `{"type":"object","allOf":[{"required":["a"]}],"properties":{"a":{"type":"string"}}}`},
	{"nested $ref and $defs", `{"type":"object","$defs":{"P":{"type":"string"}},"definitions":{"Q":{}},"properties":{"p":{"$ref":"#/$defs/P","description":"P ref"},"q":{"$ref":"#/definitions/Q"}}}`},
	{"properties not an object", `{"properties":{"a":{"properties":[{"type":"string"}]},"b":{"properties":"x"},"c":{"properties":null}}}`},
	{"property names escaped", `{"properties":{"a/b":{"type":"string"},"~0":{},"<&>":{"type":"number"},"\u2028\u2029":{},"é":{},"\"q\"":{},"\\":{},"":{}}}`},
	{"property names unsorted and duplicated", `{"properties":{"z":{},"b":{"type":"string"},"a":{},"b":{"type":"number"}}}`},
	{"required", `{"required":["a","a","ghost"],"properties":{"a":{"required":["x",1]},"b":{"required":"x"},"c":{"required":[]}}}`},
	{"additionalProperties bool and schema", `{"additionalProperties":true,"properties":{"a":{"type":"object","additionalProperties":false},"b":{"additionalProperties":{"type":"string","pattern":"^a"}},"c":{"additionalProperties":{"oneOf":[]}},"d":{"additionalProperties":5}}}`},
	{"additionalProperties with patternProperties", `{"patternProperties":{"^x":{}},"additionalProperties":false,"properties":{"a":{"patternProperties":{},"additionalProperties":{}}}}`},
	{"items", `{"properties":{"a":{"type":"array","items":{"type":"string"}},"b":{"items":[{}]},"c":{"items":false},"d":{"items":true},"e":{"items":{"not":{}}},"f":{"items":"x"},"g":{"items":[]}}}`},
	{"items nested", `{"properties":{"m":{"items":{"items":{"items":{"type":"integer","minimum":0}}}}}}`},
	{"enum", `{"properties":{"a":{"enum":["x",1,null,true,{"b":1,"a":[2,{"d":0,"c":1}]}]},"b":{"enum":"x"},"c":{"enum":[]},"d":{"enum":{"a":1}}}}`},
	{"const", `{"properties":{"a":{"const":"x"},"b":{"const":null},"c":{"const":{"z":1,"a":[1e21,1e-7]}},"d":{"const":[]}}}`},
	{"root enum and const", `{"enum":[{"a":1}],"const":{"a":1}}`},
	{"numbers", `{"properties":{"a":{"minimum":-0.0,"maximum":1e308},"b":{"exclusiveMinimum":1.5,"exclusiveMaximum":1E2},"c":{"minimum":123456789012345678},"d":{"maximum":5e-324}}}`},
	{"numbers invalid", `{"properties":{"a":{"minimum":"1"},"b":{"maximum":true},"c":{"exclusiveMinimum":true},"d":{"exclusiveMaximum":null},"e":{"minimum":[1]}}}`},
	{"counts", `{"properties":{"a":{"minLength":0,"maxLength":1e3},"b":{"minItems":2.0,"maxItems":100000000000000000000}}}`},
	{"counts invalid", `{"properties":{"a":{"minLength":-1},"b":{"maxLength":1.5},"c":{"minItems":"2"},"d":{"maxItems":-0.5}}}`},
	{"root counts invalid", `{"minLength":-1,"maxItems":"x","minimum":false,"properties":{"a":{}}}`},
	{"pattern", `{"properties":{"a":{"pattern":"^[a-z]+$"},"b":{"pattern":"(?=x)"},"c":{"pattern":5},"d":{"pattern":"\\p{L}+\u00e9"},"e":{"pattern":"(?<n>x)"},"f":{"pattern":"["}}}`},
	{"root pattern invalid", `{"pattern":"(?!x)","properties":{"a":{}}}`},
	{"annotations", `{"title":"T","description":"a\nb\"c\\d\/e<>&\u2028","default":{"z":{},"y":[1,2]},"examples":[["a"],{"b":null}],"format":"uri","properties":{"a":{"title":5,"description":[],"format":{},"default":null,"examples":"x"}}}`},
	{"annotations kept on a replaced node", `{"properties":{"a":{"anyOf":[{}],"title":"A","description":"D","default":1,"examples":[2],"format":"f","minimum":3}}}`},
	{"inexpressible keywords nested", `{"properties":{"a":{"allOf":[]},"b":{"if":{}},"c":{"dependencies":{}},"d":{"propertyNames":{}},"e":{"uniqueItems":false},"f":{"multipleOf":1},"g":{"contains":{}},"h":{"minProperties":1},"i":{"unevaluatedProperties":false},"j":{"disallow":"x"},"k":{"extends":{}},"l":{"divisibleBy":2},"m":{"$recursiveRef":"#"}}}`},
	{"silent keywords", `{"$schema":"x","$id":"y","$comment":"c","$anchor":"a","x-vendor":{"deep":[1]},"nullable":true,"deprecated":true,"readOnly":true,"writeOnly":false,"contentMediaType":"text/plain","properties":{"a":{"nullable":true,"x-mcp-header":"H"}}}`},
	{"boolean and odd subschemas", `{"properties":{"t":true,"f":false,"n":null,"s":"x","num":1,"arr":[]},"additionalProperties":false}`},
	{"key escapes match no keyword", `{"\u0074ype":"string","properties":{"a":{"\u0074ype":"string","ty\u003cpe":"x"}}}`},
	{"unicode strings", `{"properties":{"a":{"enum":["\ud800","\ud83d\ude00","\u0000\u001f","\ufffd"],"description":"\ud800x"}}}`},
	{"float formatting", `{"properties":{"a":{"default":[1e20,1e21,0.000001,1e-7,-0,1.0,100,1e15,999999999999999,1e16]}}}`},
	{"depth 33 via properties", strings.Repeat(`{"properties":{"a":`, 33) + `{"type":"string","title":"deep"}` + strings.Repeat("}}", 33)},
	{"depth 34 via items", strings.Repeat(`{"items":`, 34) + `{"type":"string","description":"deep"}` + strings.Repeat("}", 34)},
	{"deep annotations only", strings.Repeat(`{"properties":{"a":`, 36) + `{"title":"t","default":{"a":[1]}}` + strings.Repeat("}}", 36)},
	{"deep value in default", `{"properties":{"a":{"default":` + strings.Repeat("[", 129) + strings.Repeat("]", 129) + `,"const":` + strings.Repeat("[", 128) + strings.Repeat("]", 128) + `}}}`},
	{"deep const narrows its node", `{"properties":{"a":{"title":"a","const":` + strings.Repeat(`{"x":`, 129) + "1" + strings.Repeat("}", 129) + `}}}`},
	{"everything at once", `{"type":"object","title":"All","required":["s","n"],"additionalProperties":false,"properties":{"s":{"type":"string","minLength":1,"maxLength":9,"pattern":"^s","format":"email"},"n":{"type":"number","minimum":0,"exclusiveMaximum":10},"i":{"type":"integer","enum":[1,2]},"a":{"type":"array","items":{"type":"object","properties":{"k":{"const":"v"}},"required":["k"]},"minItems":1,"maxItems":2},"o":{"type":"object","additionalProperties":{"type":"boolean"}}}}`},
}

// walkerGoCases are decoded values JSON decoding never makes.
func walkerGoCases() []struct {
	name string
	in   any
} {
	cyclic := map[string]any{"type": "object"}
	cyclic["enum"] = []any{cyclic}
	selfProps := map[string]any{"type": "object", "title": "self"}
	selfProps["properties"] = map[string]any{"again": selfProps}
	selfItems := map[string]any{"description": "items"}
	selfItems["items"] = selfItems
	selfExtra := map[string]any{"type": "object"}
	selfExtra["x-self"] = selfExtra
	deepDefault := any("x")
	for range maxValueDepth + 1 {
		deepDefault = []any{deepDefault}
	}
	prop := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return map[string]any{"properties": map[string]any{"x": m}}
	}
	return []struct {
		name string
		in   any
	}{
		{"NaN const", prop("const", math.NaN(), "title", "T")},
		{"Inf minimum", prop("minimum", math.Inf(1))},
		{"NaN in enum", prop("enum", []any{1.0, math.NaN()})},
		{"NaN in tuple items", prop("items", []any{math.NaN()})},
		{"NaN items", prop("items", math.NaN())},
		{"NaN additionalProperties", prop("additionalProperties", math.NaN())},
		{"func default", prop("default", func() {}, "examples", []any{math.Inf(-1)}, "description", "d")},
		{"int count", prop("minLength", 3)},
		{"int in required", prop("required", []any{1})},
		{"[]string type", prop("type", []string{"string"})},
		{"map[string]string subschema", map[string]any{"properties": map[string]any{"x": map[string]string{"type": "string"}}}},
		{"json.RawMessage subschema", map[string]any{"properties": map[string]any{"x": json.RawMessage(`{"type":"string"}`)}}},
		{"json.Number values", prop("maximum", json.Number("2.50"), "minLength", json.Number("0x1p4"), "const", json.Number("1_0"), "default", json.Number("+5"))},
		{"json.Number not numbers", prop("minimum", json.Number(" 5"), "maxLength", json.Number("1e400"))},
		{"json.Number NaN", prop("maximum", json.Number("NaN"), "default", json.Number("Inf"))},
		{"invalid UTF-8 property names nested", prop("properties", map[string]any{"a\xff": map[string]any{}, "b": map[string]any{}})},
		{"invalid UTF-8 property names at the root", map[string]any{"title": "r", "properties": map[string]any{"a\xff": true}}},
		{"invalid UTF-8 keyword-like names", map[string]any{"type\xff": "string", "properties": map[string]any{"x": map[string]any{"minimum\xfe": "x", "type": "string"}}}},
		{"invalid UTF-8 pattern", prop("pattern", "a\xffb", "title", "p")},
		{"invalid UTF-8 strings", prop("title", "t\xff", "enum", []any{"e\xfe"}, "type", "string\xff")},
		{"invalid UTF-8 root type", map[string]any{"type": "object\xff"}},
		{"invalid UTF-8 key in const", prop("const", map[string]any{"k\xff": 1})},
		{"cyclic enum at the root", cyclic},
		{"cyclic properties", selfProps},
		{"cyclic items", selfItems},
		{"cyclic vendor keyword", selfExtra},
		{"deep default", prop("default", deepDefault, "title", "kept")},
		{"deep const", prop("const", deepDefault)},
		{"deep root enum", map[string]any{"enum": []any{deepDefault}, "properties": map[string]any{}}},
		{"nil", nil},
		{"struct", struct{ Type string }{"object"}},
		{"typed nil map", map[string]any(nil)},
	}
}

// TestNarrowWalkerGolden pins what Narrow writes and reports for the
// hand-written cases, the Go values and rawSeeds, decoded (and, for
// JSON, as raw bytes, which must agree) in testdata/walker.golden; go test
// -run TestNarrowWalkerGolden -update rewrites it.
func TestNarrowWalkerGolden(t *testing.T) {
	var out strings.Builder
	record := func(name string, got []byte, dropped []string) {
		fmt.Fprintf(&out, "== %s\n%s\n%q\n", name, got, dropped)
	}
	for _, c := range walkerJSONCases {
		got, dropped := Narrow(decode(t, c.in))
		rawGot, rawDropped := Narrow(json.RawMessage(c.in))
		require.Equal(t, string(got), string(rawGot), c.name)
		require.Equal(t, dropped, rawDropped, c.name)
		record(c.name, got, dropped)
	}
	for _, c := range walkerGoCases() {
		got, dropped := Narrow(c.in)
		require.True(t, json.Valid(got), "%s: %s", c.name, got)
		record(c.name, got, dropped)
	}
	for i, b := range rawSeeds(t) {
		name := string(b)
		if len(name) > 60 {
			name = name[:60] + "..."
		}
		got, dropped := Narrow(json.RawMessage(b))
		record(fmt.Sprintf("seed %d %q", i, name), got, dropped)
		var tree any
		if json.Unmarshal(b, &tree) == nil {
			tgot, tdropped := Narrow(tree)
			require.Equal(t, string(got), string(tgot), name)
			require.Equal(t, dropped, tdropped, name)
		}
	}
	const golden = "testdata/walker.golden"
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(out.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run with -update to create")
	require.Equal(t, string(want), out.String())
}
