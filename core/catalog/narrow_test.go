package catalog

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestKeywordNamesSorted(t *testing.T) {
	// emitRaw writes keywords in id order; the output is sorted only if the
	// ids are in byte order of the names.
	require.True(t, slices.IsSorted(keywordNames[:]), "%v", keywordNames)
	for id, name := range keywordNames {
		assert.Equal(t, id, keyword(name), name)
		assert.False(t, inexpressible(name), name)
	}
}

func TestNarrow(t *testing.T) {
	deep := `{"type":"string"}`
	for range maxSchemaDepth + 1 {
		deep = `{"type":"object","properties":{"a":` + deep + `}}`
	}
	tests := []struct {
		name    string
		in      string
		want    string
		dropped []string
	}{
		{
			name: "expressible schema kept whole, keys sorted",
			in: `{"type":"object","required":["path"],"additionalProperties":false,"properties":{
				"path":{"type":"string","minLength":1,"maxLength":4096,"pattern":"^/","description":"Path","format":"uri-reference"},
				"limit":{"type":"integer","minimum":1,"maximum":100,"default":10},
				"ratio":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},
				"mode":{"enum":["r","w",null,1.5]},"kind":{"const":"file","title":"Kind"},
				"tags":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":5,"examples":[["a"]]},
				"opt":{"type":["string","null"]},"any":{}}}`,
			want: `{"additionalProperties":false,"properties":{"any":{},"kind":{"const":"file","title":"Kind"},` +
				`"limit":{"default":10,"maximum":100,"minimum":1,"type":"integer"},"mode":{"enum":["r","w",null,1.5]},` +
				`"opt":{"type":["string","null"]},"path":{"description":"Path","format":"uri-reference","maxLength":4096,"minLength":1,"pattern":"^/","type":"string"},` +
				`"ratio":{"exclusiveMaximum":1,"exclusiveMinimum":0,"type":"number"},` +
				`"tags":{"examples":[["a"]],"items":{"type":"string"},"maxItems":5,"minItems":1,"type":"array"}},"required":["path"],"type":"object"}`,
		},
		{
			name: "nested objects and array items are kept and narrowed in place",
			in: `{"type":"object","properties":{"o":{"type":"object","properties":{"in":{"type":"object",
				"properties":{"x":{"oneOf":[{"type":"string"}],"description":"X"},"y":{"type":"integer"}},"required":["x","y"]}}},
				"list":{"type":"array","items":{"$ref":"#/$defs/item"}}},"$defs":{"item":{"type":"string"}}}`,
			want: `{"properties":{"list":{"items":{},"type":"array"},"o":{"properties":{"in":{"properties":{"x":{"description":"X"},` +
				`"y":{"type":"integer"}},"required":["x","y"],"type":"object"}},"type":"object"}},"type":"object"}`,
			dropped: []string{"/properties/list/items", "/properties/o/properties/in/properties/x"},
		},
		{
			name: "narrowed property stays under additionalProperties false, required untouched",
			in: `{"type":"object","additionalProperties":false,"required":["filter","q","ghost"],
				"properties":{"filter":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"title":"Filter"},"q":{"type":"string"}}}`,
			want: `{"additionalProperties":false,"properties":{"filter":{"default":null,"title":"Filter"},"q":{"type":"string"}},` +
				`"required":["filter","q","ghost"],"type":"object"}`,
			dropped: []string{"/properties/filter"},
		},
		{
			name:    "tuple items narrow the array node",
			in:      `{"type":"object","properties":{"pt":{"type":"array","items":[{"type":"number"},{"type":"number"}]}}}`,
			want:    `{"properties":{"pt":{}},"type":"object"}`,
			dropped: []string{"/properties/pt"},
		},
		{
			name: "each inexpressible keyword narrows its node",
			in: `{"type":"object","properties":{
				"allOf":{"allOf":[{}]},"not":{"not":{}},"if":{"if":{},"then":{}},"pp":{"type":"object","patternProperties":{"x":{}}},
				"prefix":{"prefixItems":[{}]},"d4":{"type":"number","minimum":0,"exclusiveMinimum":true},
				"re":{"type":"string","pattern":"(?=x)"},"mult":{"type":"integer","multipleOf":2},"uniq":{"type":"array","uniqueItems":true},
				"deps":{"dependentRequired":{"a":["b"]}},"ref":{"$ref":"#/x","description":"R"}}}`,
			want: `{"properties":{"allOf":{},"d4":{},"deps":{},"if":{},"mult":{},"not":{},"pp":{},"prefix":{},"re":{},"ref":{"description":"R"},"uniq":{}},"type":"object"}`,
			dropped: []string{"/properties/allOf", "/properties/d4", "/properties/deps", "/properties/if", "/properties/mult",
				"/properties/not", "/properties/pp", "/properties/prefix", "/properties/re", "/properties/ref", "/properties/uniq"},
		},
		{
			name: "ill-formed subset values narrow their node",
			in: `{"type":"object","properties":{"t":{"type":"any"},"te":{"type":[]},"tn":{"type":5},"ml":{"maxLength":-1},"mf":{"minItems":1.5},
				"mn":{"minimum":"1"},"p":{"properties":[]},"r":{"required":"x"},"e":{"enum":"x"},"pi":{"pattern":5}}}`,
			want: `{"properties":{"e":{},"mf":{},"ml":{},"mn":{},"p":{},"pi":{},"r":{},"t":{},"te":{},"tn":{}},"type":"object"}`,
			dropped: []string{"/properties/e", "/properties/mf", "/properties/ml", "/properties/mn", "/properties/p",
				"/properties/pi", "/properties/r", "/properties/t", "/properties/te", "/properties/tn"},
		},
		{
			name:    "boolean and non-object subschemas",
			in:      `{"type":"object","properties":{"yes":true,"no":false,"num":5,"nul":null,"s":"string"},"additionalProperties":{"type":"string"}}`,
			want:    `{"additionalProperties":{"type":"string"},"properties":{"no":{},"nul":{},"num":{},"s":{},"yes":{}},"type":"object"}`,
			dropped: []string{"/properties/no", "/properties/nul", "/properties/num", "/properties/s"},
		},
		{
			name:    "additionalProperties schema narrowed",
			in:      `{"type":"object","additionalProperties":{"anyOf":[{}]},"properties":{"m":{"type":"object","additionalProperties":{"type":"integer"}}}}`,
			want:    `{"additionalProperties":{},"properties":{"m":{"additionalProperties":{"type":"integer"},"type":"object"}},"type":"object"}`,
			dropped: []string{"/additionalProperties"},
		},
		{
			name: "keywords without validation meaning left out silently",
			in: `{"$schema":"http://json-schema.org/draft-07/schema#","$id":"x","$comment":"c","definitions":{"a":{}},"x-vendor":1,
				"type":"object","properties":{"a":{"type":"string","nullable":true,"deprecated":true,"readOnly":true,"contentMediaType":"text/plain"}}}`,
			want: `{"properties":{"a":{"type":"string"}},"type":"object"}`,
		},
		{
			name: "ill-formed annotations left out silently",
			in:   `{"type":"object","title":5,"description":["d"],"properties":{"a":{"type":"string","format":1,"title":"ok"}}}`,
			want: `{"properties":{"a":{"title":"ok","type":"string"}},"type":"object"}`,
		},
		{
			name: "root type added when absent",
			in:   `{"properties":{"a":{"type":"boolean"}}}`,
			want: `{"properties":{"a":{"type":"boolean"}},"type":"object"}`,
		},
		{
			name:    "root inexpressible keywords left out, the rest enforced",
			in:      `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a"],"anyOf":[{"required":["a"]},{"required":["b"]}],"minProperties":1}`,
			want:    `{"properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a"],"type":"object"}`,
			dropped: []string{"/"},
		},
		{
			name:    "root patternProperties takes additionalProperties with it",
			in:      `{"type":"object","properties":{"a":{"type":"string"}},"patternProperties":{"^x-":{}},"additionalProperties":false}`,
			want:    `{"properties":{"a":{"type":"string"}},"type":"object"}`,
			dropped: []string{"/"},
		},
		{
			name:    "root ill-formed keyword left out and reported with the children",
			in:      `{"type":"object","required":"a","properties":{"a":{"oneOf":[]}}}`,
			want:    `{"properties":{"a":{}},"type":"object"}`,
			dropped: []string{"/", "/properties/a"},
		},
		{
			name:    "root $ref accepts any object",
			in:      `{"$ref":"#/definitions/Args","definitions":{"Args":{"type":"object"}},"description":"D","properties":{"a":{}}}`,
			want:    `{"description":"D","type":"object"}`,
			dropped: []string{"/"},
		},
		{name: "root type not object", in: `{"type":"array","items":{}}`, want: `{"type":"object"}`, dropped: []string{"/"}},
		{name: "root type array", in: `{"type":["object","null"]}`, want: `{"type":"object"}`, dropped: []string{"/"}},
		{name: "root not an object", in: `[{"type":"object"}]`, want: `{"type":"object"}`, dropped: []string{"/"}},
		{name: "root true", in: `true`, want: `{"type":"object"}`, dropped: []string{"/"}},
		{name: "root null", in: `null`, want: `{"type":"object"}`, dropped: []string{"/"}},
		{
			name:    "pointer tokens escaped in paths",
			in:      `{"type":"object","properties":{"a/b":{"anyOf":[]},"c~d":{"not":{}}}}`,
			want:    `{"properties":{"a/b":{},"c~d":{}},"type":"object"}`,
			dropped: []string{"/properties/a~1b", "/properties/c~0d"},
		},
		{
			name: "strings escaped as encoding/json does",
			in:   `{"type":"object","description":"<a href=\"x\">&amp;</a>\u2028\u0001\t","properties":{"é":{"const":"\u00e9\ud83d\ude00"}}}`,
			want: `{"description":"\u003ca href=\"x\"\u003e\u0026amp;\u003c/a\u003e\u2028\u0001\t","properties":{"é":{"const":"é😀"}},"type":"object"}`,
		},
		{
			name: "numbers written as encoding/json does",
			in:   `{"type":"object","properties":{"n":{"enum":[1e21,1e-7,0.000001,-0,123456789012,1.5e300,100]}}}`,
			want: `{"properties":{"n":{"enum":[1e+21,1e-7,0.000001,-0,123456789012,1.5e+300,100]}},"type":"object"}`,
		},
		{
			name: "enum and const objects with sorted keys",
			in:   `{"type":"object","properties":{"e":{"enum":[{"b":1,"a":{"d":[true],"c":null}}]},"c":{"const":{"z":1,"y":2}}}}`,
			want: `{"properties":{"c":{"const":{"y":2,"z":1}},"e":{"enum":[{"a":{"c":null,"d":[true]},"b":1}]}},"type":"object"}`,
		},
		{
			name:    "depth bound",
			in:      deep,
			want:    strings.Repeat(`{"properties":{"a":`, maxSchemaDepth+1) + `{}` + strings.Repeat(`},"type":"object"}`, maxSchemaDepth+1),
			dropped: []string{strings.Repeat("/properties/a", maxSchemaDepth+1)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, dropped := Narrow(decode(t, tt.in))
			assert.Equal(t, tt.want, string(got))
			assert.Equal(t, tt.dropped, dropped)
			assertNarrowInvariants(t, got)
		})
	}
}

// assertNarrowInvariants checks what every narrowed schema must be: valid
// JSON, byte-identical to encoding/json's rendering of its own value, an
// object schema of type "object", and a fixed point of Narrow.
func assertNarrowInvariants(t *testing.T, got []byte) {
	t.Helper()
	require.True(t, json.Valid(got), "not JSON: %s", got)
	var v any
	require.NoError(t, json.Unmarshal(got, &v))
	std, err := json.Marshal(v)
	require.NoError(t, err)
	assert.Equal(t, string(std), string(got), "differs from encoding/json")
	m, ok := v.(map[string]any)
	require.True(t, ok)
	assert.Equal(t, "object", m["type"])
	again, dropped := Narrow(v)
	assert.Equal(t, string(got), string(again), "not a fixed point")
	assert.Empty(t, dropped, "narrowing a narrowed schema dropped something")
	_, err = compileSchema(got)
	assert.NoError(t, err, "narrowed schema does not compile")
}

func TestNarrowGoValues(t *testing.T) {
	// Values a Go caller may pass that JSON decoding never makes.
	cyclic := map[string]any{"type": "object"}
	cyclic["enum"] = []any{cyclic}
	tests := []struct {
		name    string
		in      any
		want    string
		dropped []string
	}{
		{"NaN const narrows the node", map[string]any{"properties": map[string]any{"x": map[string]any{"const": math.NaN()}}},
			`{"properties":{"x":{}},"type":"object"}`, []string{"/properties/x"}},
		{"Inf minimum narrows the node", map[string]any{"properties": map[string]any{"x": map[string]any{"minimum": math.Inf(1)}}},
			`{"properties":{"x":{}},"type":"object"}`, []string{"/properties/x"}},
		{"unencodable default left out", map[string]any{"properties": map[string]any{"x": map[string]any{"default": func() {}}}},
			`{"properties":{"x":{}},"type":"object"}`, nil},
		{"json.Number accepted", map[string]any{"properties": map[string]any{"x": map[string]any{"maximum": json.Number("2.50")}}},
			`{"properties":{"x":{"maximum":2.5}},"type":"object"}`, nil},
		{"json.Number NaN or Inf is no number", map[string]any{"properties": map[string]any{"x": map[string]any{"maximum": json.Number("NaN")},
			"y": map[string]any{"const": json.Number("+Inf")}, "z": map[string]any{"default": json.Number("infinity"), "title": "Z"}}},
			`{"properties":{"x":{},"y":{},"z":{"title":"Z"}},"type":"object"}`, []string{"/properties/x", "/properties/y"}},
		{"invalid UTF-8 property names narrow the node", map[string]any{"properties": map[string]any{"x": map[string]any{
			"properties": map[string]any{"a\xff": map[string]any{}, "a\xfe": map[string]any{}}}}},
			`{"properties":{"x":{}},"type":"object"}`, []string{"/properties/x"}},
		{"invalid UTF-8 root property names", map[string]any{"properties": map[string]any{"a\xff": true}},
			`{"type":"object"}`, []string{"/"}},
		{"cyclic enum at the root left out", cyclic, `{"type":"object"}`, []string{"/"}},
		{"int is not a JSON value", map[string]any{"properties": map[string]any{"x": map[string]any{"minLength": 3}}},
			`{"properties":{"x":{}},"type":"object"}`, []string{"/properties/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, dropped := Narrow(tt.in)
			assert.Equal(t, tt.want, string(got))
			assert.Equal(t, tt.dropped, dropped)
			assertNarrowInvariants(t, got)
		})
	}
}

func TestNarrowDoesNotModifyInput(t *testing.T) {
	const in = `{"type":"object","anyOf":[{}],"properties":{"a":{"oneOf":[{}],"description":"d"},"b":{"type":"array","items":[{}]}},"required":["a"]}`
	v := decode(t, in)
	Narrow(v)
	assert.Equal(t, decode(t, in), v)
}

// TestNarrowGolden narrows realistic tool schemas (testdata/narrow/*.json)
// and compares with the .golden files; go test -run TestNarrowGolden
// -update rewrites them.
func TestNarrowGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/narrow/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			in, err := os.ReadFile(f)
			require.NoError(t, err)
			got, dropped := Narrow(decode(t, string(in)))
			assertNarrowInvariants(t, got)
			var pretty strings.Builder
			ind, err := indent(got)
			require.NoError(t, err)
			pretty.Write(ind)
			pretty.WriteString("\n-- dropped --\n")
			for _, d := range dropped {
				pretty.WriteString(d + "\n")
			}
			golden := strings.TrimSuffix(f, ".json") + ".golden"
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(pretty.String()), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run with -update to create")
			assert.Equal(t, string(want), pretty.String())
		})
	}
}

func indent(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	err := json.Indent(&buf, b, "", "  ")
	return buf.Bytes(), err
}

// FuzzNarrow narrows arbitrary JSON: it never panics, the output is valid
// JSON exactly as encoding/json writes it, an object schema, and a fixed
// point (narrowing it again gives the same bytes and reports nothing);
// every reported path is a JSON pointer.
func FuzzNarrow(f *testing.F) {
	files, _ := filepath.Glob("testdata/narrow/*.json")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		`{}`, `null`, `[]`, `{"type":"object","properties":{"a":{"type":"array","items":{"anyOf":[]}}}}`,
		`{"properties":{"a":false,"b":{"minimum":true}}}`, `{"$ref":"#"}`, `{"patternProperties":{},"additionalProperties":{"type":"x"}}`,
		`{"properties":{"a":{"enum":[{"b":{"c":[1e300,-0,"\u2028"]}}]}}}`, `{"properties":{"~/":{"pattern":"(?<n>x)"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		got, dropped := Narrow(v)
		assertNarrowInvariants(t, got)
		for _, d := range dropped {
			require.True(t, strings.HasPrefix(d, "/"), "path %q", d)
		}
		// Pure: the same input gives the same output.
		again, dropped2 := Narrow(v)
		require.Equal(t, string(got), string(again))
		require.Equal(t, dropped, dropped2)
	})
}
