package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

func hostNames(tools []*Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Spec().Name)
	}
	return out
}

func TestBuildRejects(t *testing.T) {
	// A tool the server may name so that its plain host name equals the
	// sanitized host name of its tool "x.".
	sanitized := ToolName("srv", "x.")
	twin := strings.TrimPrefix(sanitized, "mcp__srv__")
	require.Equal(t, sanitized, ToolName("srv", twin))

	l := Lists{
		Tools: []ports.ToolItem{
			item(t, "b", `{"type":"object"}`),
			item(t, "", `{"type":"object"}`),
			item(t, "a", `{}`),
			item(t, "b", `{"type":"object","properties":{"other":{}}}`), // duplicate
			item(t, "b", `{}`),                                          // duplicate again
			item(t, "arr", `{"type":"array"}`),
			item(t, "arr2", `{"type":["object"]}`),
			item(t, "str", `"object"`),
			item(t, "x.", `{}`),
			item(t, twin, `{}`),
			{Name: "nil-schema"},
			item(t, "bad", `{"type":"array"}`),
			item(t, "bad", `{}`), // duplicate of a rejected tool is still a duplicate
		},
		Dropped: []ports.DroppedTool{{Name: "hdr", Reason: "invalid_header_annotation"}, {Name: "", Reason: ""}},
		Prompts: []json.RawMessage{
			json.RawMessage(`{"name":"p1"}`), json.RawMessage(`{"name":5}`), json.RawMessage(`[]`), json.RawMessage(`null`),
			json.RawMessage(` {"name":"p2","arguments":[]}`), json.RawMessage(`{}`), json.RawMessage(`{"name":"p3"`),
		},
		Resources: []json.RawMessage{
			json.RawMessage(`{"uri":"file:///a","name":"a"}`), json.RawMessage(`{"name":"no uri"}`), json.RawMessage(`{"uri":null}`),
		},
		ResourceTemplates: []json.RawMessage{
			json.RawMessage(`{"uriTemplate":"file:///{p}"}`), json.RawMessage(`{"uri":"file:///x"}`),
		},
	}
	cat := Build("srv", ports.SessionIdentity{ServerID: "srv", Declared: []ports.ListKind{ports.ListTools}}, l, nil, nil)

	assert.Equal(t, []string{"mcp__srv__a", "mcp__srv__b"}, hostNames(cat.Tools))
	assert.Equal(t, `{"type":"object"}`, string(cat.Tools[1].Spec().InputSchema), "the first b is kept")
	assert.Equal(t, []Rejected{
		{"srv", ports.ListPrompts, "", ReasonInvalidEntry},
		{"srv", ports.ListPrompts, "", ReasonInvalidEntry},
		{"srv", ports.ListPrompts, "", ReasonInvalidEntry},
		{"srv", ports.ListPrompts, "", ReasonInvalidEntry},
		{"srv", ports.ListPrompts, "", ReasonInvalidEntry},
		{"srv", ports.ListResourceTemplates, "", ReasonInvalidEntry},
		{"srv", ports.ListResources, "", ReasonInvalidEntry},
		{"srv", ports.ListResources, "", ReasonInvalidEntry},
		{"srv", ports.ListTools, "", ReasonDropped},
		{"srv", ports.ListTools, "", ReasonInvalidName},
		{"srv", ports.ListTools, "arr", ReasonInvalidInputSchema},
		{"srv", ports.ListTools, "arr2", ReasonInvalidInputSchema},
		{"srv", ports.ListTools, "b", ReasonDuplicateName},
		{"srv", ports.ListTools, "b", ReasonDuplicateName},
		{"srv", ports.ListTools, "bad", ReasonDuplicateName},
		{"srv", ports.ListTools, "bad", ReasonInvalidInputSchema},
		{"srv", ports.ListTools, "hdr", "invalid_header_annotation"},
		{"srv", ports.ListTools, "nil-schema", ReasonInvalidInputSchema},
		{"srv", ports.ListTools, "str", ReasonInvalidInputSchema},
		{"srv", ports.ListTools, "x.", ReasonNameCollision},
		{"srv", ports.ListTools, twin, ReasonNameCollision},
	}, cat.Rejected)
	_, ok := cat.Tool(sanitized)
	assert.False(t, ok, "a collided name resolves to nothing")

	require.Len(t, cat.Prompts, 2)
	assert.Equal(t, []string{"p1", "p2"}, []string{cat.Prompts[0].NameOnServer(), cat.Prompts[1].NameOnServer()})
	require.Len(t, cat.Resources, 1)
	assert.Equal(t, "file:///a", cat.Resources[0].URI())
	assert.Equal(t, "a", cat.Resources[0].Name())
	require.Len(t, cat.ResourceTemplates, 1)
	assert.Equal(t, "file:///{p}", cat.ResourceTemplates[0].URITemplate())
	assert.Empty(t, cat.Diagnostics)
	assert.True(t, cat.Complete())
	assert.Nil(t, cat.Partial)
}

func TestBuildDiagnostics(t *testing.T) {
	withMeta := func(name string, v any) ports.ToolItem {
		it := item(t, name, `{}`)
		it.Meta = map[string]any{MetaMaxResultSizeChars: v, "other/key": "x"}
		return it
	}
	l := Lists{Tools: []ports.ToolItem{
		item(t, "z", `{"properties":{"a":{"anyOf":[]},"b":{"type":"array","items":[{}]}},"oneOf":[]}`),
		withMeta("m-min", 1000.0),
		withMeta("m-max", 500000.0),
		withMeta("m-num", json.Number("2000")),
		withMeta("m-low", 999.0),
		withMeta("m-high", 500001.0),
		withMeta("m-frac", 1500.5),
		withMeta("m-str", "2000"),
		withMeta("m-neg", -2000.0),
		withMeta("m-huge", 1e300),
		withMeta("m-null", nil),
		withMeta("m-bool", true),
		withMeta("m-obj", map[string]any{"v": 2000.0}),
		withMeta("m-badnum", json.Number("2e400")),
		{Name: "dup-narrowed", InputSchema: decode(t, `{"properties":{"a":{"not":{}}}}`)},
		{Name: "dup-narrowed", InputSchema: decode(t, `{"properties":{"b":{"not":{}}}}`)},
	}}
	cat := Build("srv", ports.SessionIdentity{}, l, nil, &Options{AdmissionCap: 4321})
	caps := map[string]int{}
	for _, tool := range cat.Tools {
		caps[tool.NameOnServer()] = tool.ResultCap()
	}
	assert.Equal(t, map[string]int{
		"z": 4321, "m-min": 1000, "m-max": 500000, "m-num": 2000, "m-low": 4321, "m-high": 4321, "m-frac": 4321,
		"m-str": 4321, "m-neg": 4321, "m-huge": 4321, "m-null": 4321, "m-bool": 4321, "m-obj": 4321, "m-badnum": 4321,
		"dup-narrowed": 4321,
	}, caps)
	ignored := Diagnostic{Reason: DiagResultSizeMetaIgnored}
	named := func(d Diagnostic, name string) Diagnostic { d.Tool = name; return d }
	assert.Equal(t, []Diagnostic{
		{Tool: "dup-narrowed", Reason: DiagSchemaNarrowed, Paths: []string{"/properties/a"}},
		named(ignored, "m-badnum"), named(ignored, "m-bool"), named(ignored, "m-frac"), named(ignored, "m-high"),
		named(ignored, "m-huge"), named(ignored, "m-low"), named(ignored, "m-neg"), named(ignored, "m-null"),
		named(ignored, "m-obj"), named(ignored, "m-str"),
		{Tool: "z", Reason: DiagSchemaNarrowed, Paths: []string{"/", "/properties/a", "/properties/b"}},
	}, cat.Diagnostics)
}

func TestBuildToolsSortedAndLookup(t *testing.T) {
	var items []ports.ToolItem
	for _, n := range []string{"zeta", "Alpha", "beta", "a.b", "_x", "beta-2"} {
		items = append(items, item(t, n, `{}`))
	}
	cat := Build("s", ports.SessionIdentity{}, Lists{Tools: items}, nil, nil)
	names := hostNames(cat.Tools)
	assert.IsIncreasing(t, names)
	require.Len(t, names, 6)
	for _, it := range items {
		tool, ok := cat.Tool(ToolName("s", it.Name))
		require.True(t, ok, it.Name)
		assert.Equal(t, it.Name, tool.NameOnServer())
	}
	_, ok := cat.Tool("mcp__s__missing")
	assert.False(t, ok)
	host := cat.ModelTools()
	require.Len(t, host, 6)
	for i, h := range host {
		assert.Same(t, cat.Tools[i], h)
	}
}

func TestBuildKeepsIdentityAndPartial(t *testing.T) {
	id := ports.SessionIdentity{ServerID: "s", ProtocolVersion: "2025-11-25", ServerName: "n", ServerVersion: "1",
		Declared: []ports.ListKind{ports.ListTools, ports.ListPrompts}}
	partial := map[ports.ListKind]string{ports.ListTools: PartialPageLimit}
	cat := Build("s", id, Lists{Partial: partial}, nil, nil)
	assert.Equal(t, id, cat.Identity)
	assert.Equal(t, partial, cat.Partial)
	assert.False(t, cat.Complete())
	partial[ports.ListPrompts] = PartialListFailed
	id.Declared[0] = "changed"
	assert.Len(t, cat.Partial, 1, "Build copies Partial")
	assert.Equal(t, ports.ListTools, cat.Identity.Declared[0], "Build copies Declared")

	empty := Build("s", id, Lists{Partial: map[ports.ListKind]string{}}, nil, nil)
	assert.Nil(t, empty.Partial)
	assert.True(t, empty.Complete())
}

func TestMarkStale(t *testing.T) {
	cat := Build("s", ports.SessionIdentity{}, Lists{Tools: []ports.ToolItem{item(t, "a", `{}`)}}, nil, nil)
	stale := cat.MarkStale()
	assert.True(t, stale.Stale)
	assert.False(t, cat.Stale, "receiver unchanged")
	assert.NotSame(t, cat, stale)
	tool, ok := stale.Tool("mcp__s__a")
	require.True(t, ok, "the copy keeps its lookup")
	assert.Same(t, cat.Tools[0], tool)
}

func TestBuildDoesNotModifySchemas(t *testing.T) {
	const s = `{"properties":{"a":{"anyOf":[{"type":"string"}]},"b":{"type":"array","items":{"$ref":"#"}}},"allOf":[]}`
	it := item(t, "a", s)
	Build("s", ports.SessionIdentity{}, Lists{Tools: []ports.ToolItem{it}}, nil, nil)
	assert.Equal(t, decode(t, s), it.InputSchema)
}

func TestRejectedJSON(t *testing.T) {
	b, err := json.Marshal(Rejected{Server: "s", Kind: KindServer, Name: "s", Reason: "sse_unsupported"})
	require.NoError(t, err)
	assert.Equal(t, `{"server":"s","kind":"server","name":"s","reason":"sse_unsupported"}`, string(b))
}

// TestBuildLarge builds a catalog large enough to be narrowed on several
// goroutines, with schemas shared and distinct, narrowed and not, and
// checks every tool against Narrow of its own schema.
func TestBuildLarge(t *testing.T) {
	schemas := []string{
		`{"type":"object","properties":{"a":{"type":"string"}}}`,
		`{"type":"object","properties":{"a":{"anyOf":[]}}}`,
		`{"properties":{"a":{"type":"string"}}}`, // same narrowed bytes as the first
		`{"type":"object","properties":{"a":{"not":{}},"b":{"type":"array","items":{"oneOf":[]}}}}`,
	}
	var items []ports.ToolItem
	for i := range 3 * parallelMin * 2 {
		s := schemas[i%len(schemas)]
		if i%7 == 0 {
			s = fmt.Sprintf(`{"type":"object","properties":{"n%d":{"type":"integer","maximum":%d}}}`, i, i)
		}
		items = append(items, item(t, fmt.Sprintf("tool.%d", i), s))
	}
	cat := Build("big", ports.SessionIdentity{}, Lists{Tools: items}, &fakeCaller{res: okResult}, nil)
	require.Len(t, cat.Tools, len(items))
	entries := map[uint32]bool{}
	for _, it := range items {
		tool, ok := cat.Tool(ToolName("big", it.Name))
		require.True(t, ok)
		want, dropped := Narrow(it.InputSchema)
		assert.Equal(t, string(want), string(tool.Spec().InputSchema), it.Name)
		assert.Equal(t, dropped, tool.Narrowed(), it.Name)
		entries[tool.schemaID()] = true
	}
	assert.Less(t, len(entries), len(items)/2, "identical narrowed schemas are shared")
	_, err := cat.Tools[0].Call(context.Background(), nil)
	require.NoError(t, err)
}

func TestSharedSchemaSharesValidator(t *testing.T) {
	cat := Build("s", ports.SessionIdentity{}, Lists{Tools: []ports.ToolItem{
		item(t, "a", `{"type":"object","properties":{"x":{"type":"integer"}}}`),
		item(t, "b", `{"properties":{"x":{"type":"integer"}},"$schema":"x"}`),
		item(t, "c", `{"type":"object","properties":{"x":{"type":"string"}}}`),
	}}, &fakeCaller{res: okResult}, nil)
	require.Len(t, cat.Tools, 3)
	a, b, c := cat.Tools[0], cat.Tools[1], cat.Tools[2]
	assert.Equal(t, a.schemaID(), b.schemaID())
	assert.NotEqual(t, a.schemaID(), c.schemaID())
	_, err := a.Call(context.Background(), json.RawMessage(`{"x":1}`))
	require.NoError(t, err)
	assert.NotNil(t, b.srv.st.sch.vals[b.schemaID()>>6].Load()[b.schemaID()&63].Load(), "b's validator was compiled by a's call")
	_, err = b.Call(context.Background(), json.RawMessage(`{"x":"1"}`))
	var ae *ArgumentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "/x", ae.Path)
}

// TestBuildNamesOfAnyLength pins the fix of a panic: a tool name longer
// than the host-facing name (65 characters and up; MCP allows 128) made
// Build slice the host name at a negative index.
func TestBuildNamesOfAnyLength(t *testing.T) {
	for _, tc := range []struct{ server, tool string }{
		{"srv", strings.Repeat("a", 56)},  // the longest plain name
		{"srv", strings.Repeat("a", 57)},  // sanitized, shorter than 64
		{"srv", strings.Repeat("a", 64)},  // as long as the host name
		{"srv", strings.Repeat("a", 65)},  // panicked
		{"srv", strings.Repeat("a", 128)}, // the longest MCP allows
		{"srv", strings.Repeat("a", 129)},
		{"srv", strings.Repeat("é", 100)},
		{"srv", strings.Repeat("\x00\xff", 5000)},
		{"srv", strings.Repeat("b", 10_000)},
		{strings.Repeat("s", 10_000), strings.Repeat("t", 10_000)},
		{"", strings.Repeat("a", 65)},
	} {
		t.Run(fmt.Sprintf("%d/%d", len(tc.server), len(tc.tool)), func(t *testing.T) {
			tools := []ports.ToolItem{item(t, tc.tool, `{}`), item(t, tc.tool+"x", `{}`)}
			t.Run("Build", func(t *testing.T) {
				checkLongNames(t, tc.server, tc.tool, Build(tc.server, ports.SessionIdentity{ServerID: tc.server}, Lists{Tools: tools}, nil, nil))
			})
			t.Run("Discover", func(t *testing.T) {
				// Discover narrows page by page; Build then names the tools.
				id := ports.SessionIdentity{ServerID: tc.server, Declared: []ports.ListKind{ports.ListTools}}
				sess := connect(t, portstest.SessionScript{Identity: id, Pages: map[ports.ListKind]map[string]ports.Page{
					ports.ListTools: {"": {Tools: tools}},
				}})
				l, err := Discover(context.Background(), sess, nil)
				require.NoError(t, err)
				checkLongNames(t, tc.server, tc.tool, Build(tc.server, id, l, nil, nil))
			})
		})
	}
}

// checkLongNames checks the catalog of the tools name and name+"x".
func checkLongNames(t *testing.T, server, name string, cat *Catalog) {
	require.Empty(t, cat.Rejected)
	require.Len(t, cat.Tools, 2)
	for i, tool := range cat.Tools {
		assert.Regexp(t, modelName, tool.HostName())
		assert.Equal(t, ToolName(server, tool.NameOnServer()), tool.HostName())
		got, ok := cat.Tool(tool.HostName())
		assert.True(t, ok)
		assert.Same(t, tool, got)
		assert.NotEqual(t, cat.Tools[1-i].HostName(), tool.HostName())
	}
	assert.ElementsMatch(t, []string{name, name + "x"}, []string{cat.Tools[0].NameOnServer(), cat.Tools[1].NameOnServer()})
}
