package mcpsession

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// TestDecodeToolsPage: each rule of listpage.go on its own. A schema is
// handed on as the bytes received (raw), decoded into the SDK's tree
// (tree), or nil; a page the rules cannot take goes to the tree decode
// (not ok). Whatever it hands is what the SDK's decode of the page gives
// (FuzzListToolsTaken holds that over any page).
func TestDecodeToolsPage(t *testing.T) {
	const (
		raw  = "raw"
		tree = "tree"
		nul  = "nil"
	)
	tool := func(members string) string { return `{"tools":[{"name":"a"` + members + `}],"nextCursor":"n"}` }
	for _, tc := range []struct {
		name    string
		page    string
		ok      bool
		in, out string
	}{
		{"plain", tool(`,"inputSchema":{"type":"object","properties":{"x":{"type":"string"}}},"outputSchema":{"type":"object"}`), true, raw, raw},
		{"absent", tool(``), true, nul, nul},
		{"null", tool(`,"inputSchema":null,"outputSchema":null`), true, nul, nul},
		{"not objects", tool(`,"inputSchema":[1,"x"],"outputSchema":true`), true, raw, raw},
		{"whitespace", tool(`,"inputSchema": { "type" : "object" } ,"outputSchema":	{}`), true, raw, raw},
		{"other escapes", tool(`,"inputSchema":{"description":"a\"b\\c\/d\n\t"}`), true, raw, nul},
		{"a \\u escape", tool(`,"inputSchema":{"description":"\u00e9"},"outputSchema":{"d":"\u003c"}`), true, tree, tree},
		{"an escaped surrogate", tool(`,"inputSchema":{"description":"\ud800"}`), true, tree, nul},
		{"invalid UTF-8", tool(`,"inputSchema":{"description":"` + "\xff" + `"},"outputSchema":{"` + "\xc3" + `":1}`), true, tree, tree},
		{"x-mcp-header as text", tool(`,"inputSchema":{"description":"x-mcp-header"},"outputSchema":{"x-mcp-header":1}`), true, tree, raw},
		{"x-mcp-header beside properties", tool(`,"inputSchema":{"x-mcp-header":"A","properties":{"p":{"items":{"x-mcp-header":"B"}}}}`), true, tree, nul},
		{"x-mcp-header in a property", tool(`,"inputSchema":{"properties":{"p":{"type":"string","x-mcp-header":"P"}}}`), false, "", ""},
		{"escaped x-mcp-header in a property", tool(`,"inputSchema":{"properties":{"p":{"x\u002dmcp-header":"P"}}}`), false, "", ""},
		{"a null tool", `{"tools":[{"name":"a"},null]}`, false, "", ""},
		{"tools not an array", `{"tools":{}}`, false, "", ""},
		{"a name not a string", `{"tools":[{"name":1}]}`, false, "", ""},
		{"not an object", `[1]`, false, "", ""},
		{"too deep", tool(`,"inputSchema":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000)), false, "", ""},
		{"a number out of range", tool(`,"inputSchema":{"maximum":1e400}`), false, "", ""},
		{"out of range in a replaced member", tool(`,"inputSchema":{"m":-1E+400},"inputSchema":{}`), false, "", ""},
		{"out of range in _meta", tool(`,"inputSchema":{},"_meta":{"m":` + strings.Repeat("9", 400) + `}`), false, "", ""},
		{"numbers in range", tool(`,"inputSchema":{"a":1e308,"b":-0,"c":1e-400,"d":-0.5E-3,"e":` + strings.Repeat("9", 300) + `}`), true, raw, nul},
		{"out of range only as text", tool(`,"inputSchema":{"d":"1e400 \"1e400\\","e":"\\"},"outputSchema":{"1e999":0}`), true, raw, raw},
		{"duplicates", tool(`,"inputSchema":{"type":"object","type":"string"},"outputSchema":{},"outputSchema":{"a":1}`), true, raw, raw},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.True(t, json.Valid([]byte(tc.page)), "the seed is valid JSON")
			p, tools, ok := decodeToolsPage(json.RawMessage(tc.page))
			require.Equal(t, tc.ok, ok)
			if !ok {
				return
			}
			require.Len(t, tools, 1)
			assert.Equal(t, "n", p.NextCursor)
			assert.Equal(t, "a", tools[0].Name)
			for _, s := range []struct {
				want string
				got  any
			}{{tc.in, tools[0].InputSchema}, {tc.out, tools[0].OutputSchema}} {
				switch s.want {
				case nul:
					assert.Nil(t, s.got)
				case raw:
					require.IsType(t, json.RawMessage(nil), s.got)
					assert.True(t, json.Valid(s.got.(json.RawMessage)))
				case tree:
					assert.NotNil(t, s.got)
					assert.NotPanics(t, func() { _ = s.got.(map[string]any) }, "the SDK's tree")
				}
			}
		})
	}
}

// TestNumbersInRange: every number outside a string is checked, whatever
// escapes the strings before it hold, and a number ParseFloat takes
// (underflow to 0 included) passes.
func TestNumbersInRange(t *testing.T) {
	for _, tc := range []struct {
		json string
		want bool
	}{
		{`[1,-2.5,3e10,4E-10,0.1e+2]`, true},
		{`[1e308,-1e308,1e-400,-0]`, true},
		{`[1e309]`, false},
		{`[-1e309]`, false},
		{`{"a":{"b":[1,2,1.8e308]}}`, false},
		{`["1e999"]`, true},
		{`["\"",1e999]`, false},
		{`["\\",1e999]`, false},
		{`["\\\"1e999"]`, true},
		{`{"1e999":"\\\\"}`, true},
		{`[` + strings.Repeat("1", 300) + `]`, true},
		{`[` + strings.Repeat("1", 308) + `]`, true},
		{`[` + strings.Repeat("9", 309) + `]`, false},
		{`[` + strings.Repeat("1", 309) + `]`, true},
		{`[` + strings.Repeat("0", 1) + `.` + strings.Repeat("1", 400) + `]`, true},
		{`[true,false,null,"e"]`, true},
	} {
		t.Run(tc.json[:min(len(tc.json), 24)], func(t *testing.T) {
			require.True(t, json.Valid([]byte(tc.json)))
			var v any
			wantOK := json.Unmarshal([]byte(tc.json), &v) == nil
			require.Equal(t, tc.want, wantOK, "encoding/json agrees with the case")
			assert.Equal(t, tc.want, numbersInRange([]byte(tc.json)))
		})
	}
}

// BenchmarkDecodeToolsPage: one page of 100 tools with benchSchema, decoded
// as the SDK does (trees, then toolItem) and with the schemas kept raw.
func BenchmarkDecodeToolsPage(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"tools":[`)
	for i := range 100 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"name":"tool_%05d","description":"Reads records of kind %d.","inputSchema":%s}`, i, i, benchSchema(i))
	}
	sb.WriteString(`],"nextCursor":"abc"}`)
	page := []byte(sb.String())
	b.Run("trees", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(page)))
		for range b.N {
			res, err := decodeListTools(bytes.Clone(page))
			if err != nil || !headerFree(res.Tools) {
				b.Fatal(err)
			}
			tools := make([]ports.ToolItem, len(res.Tools))
			for i, t := range res.Tools {
				tools[i] = toolItem(t)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(page)))
		for range b.N {
			_, tools, ok := decodeToolsPage(bytes.Clone(page))
			if !ok || len(tools) != 100 {
				b.Fatal("not taken")
			}
			if _, isRaw := tools[0].InputSchema.(json.RawMessage); !isRaw {
				b.Fatal("not raw")
			}
		}
	})
}

// FuzzRawSchema: any JSON value as a tool's inputSchema and outputSchema
// (and beside them, in _meta): decodeToolsPage takes the page only where
// the SDK's decode takes it and its filter cannot change it, and then
// every schema it hands on is the SDK's tree, or bytes encoding/json
// decodes into that tree. FuzzListToolsTaken checks the same through a
// session; this one reaches the schema's bytes directly.
func FuzzRawSchema(f *testing.F) {
	for _, seed := range []string{
		`{"type":"object","properties":{"p":{"type":"string"}}}`,
		`{"properties":{"p":{"x-mcp-header":"P"}}}`,
		`{"properties":{"p":{"x\u002dmcp-header":"P"}}}`,
		`{"description":"\ud83d\ude00\ud800\udc00\u00e9","a":"\ud800\u0041"}`,
		"{\"d\":\"\xff\",\"\xc3\":1}",
		`[1e308,-0,1e-400,1e400]`,
		`{"a":1,"a":{"b":2},"b":"\\\"1e999"}`,
		`null`, `"s"`, `true`, `{}`, `[]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			t.Skip()
		}
		s := string(b)
		page := `{"tools":[{"name":"a","inputSchema":` + s + `},{"name":"b","inputSchema":{},"outputSchema":` + s + `,"_meta":{"m":` + s + `}}]}`
		_, got, ok := decodeToolsPage(json.RawMessage(page))
		want, err := decodeListTools(json.RawMessage(page))
		if err != nil || !headerFree(want.Tools) {
			if ok {
				t.Fatalf("taken, the SDK's path does not take it (%v)", err)
			}
			return
		}
		if !ok {
			return // conservative: the tree decode, today's path
		}
		wantTools := make([]ports.ToolItem, len(want.Tools))
		for i, tl := range want.Tools {
			wantTools[i] = toolItem(tl)
		}
		assert.Equal(t, wantTools, asTrees(t, got))
	})
}
