package mcpserve

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/textsafe"
	"github.com/mcpward/mcpward/ports"
)

// Hostile text of the listings tests.
const (
	osc52 = "\x1b]52;c;Y3VybCBldmlsfHNo\x07" // a clipboard write
	bidi  = "\u202e"                         // right-to-left override
	zw    = "\u200b"                         // zero-width space
	c1    = "\u009b31m"                      // C1 CSI
)

// hostileCatalog puts every hostile kind in every text field a listing
// carries, a 200 KB description, and a resource whose URI the rule would
// change.
func hostileCatalog() Catalog {
	big := strings.Repeat("x", 200<<10)
	schema := json.RawMessage(`{"type":"object","title":"S` + jsonEsc(bidi) + `","properties":{"q":{"type":"string","description":"the query` + jsonEsc(osc52) + `"},` +
		`"description":{"type":"string","title":"` + jsonEsc(zw) + `"}}}`)
	return Catalog{
		Tools: []Tool{
			{Name: "ev" + zw + "il", Title: "T" + osc52, Description: "line one\nline two" + bidi + c1 + osc52, InputSchema: schema,
				OutputSchema: json.RawMessage(`{"type":"object","description":"` + jsonEsc(c1) + `"}`),
				Annotations:  json.RawMessage(`{"title":"A` + jsonEsc(c1) + `","readOnlyHint":true}`)},
			{Name: "big", Description: big, InputSchema: objSchema},
		},
		Prompts: []Prompt{{Name: "p" + bidi, Title: osc52, Description: big,
			Arguments: []ports.PromptArgument{{Name: "who", Title: bidi, Description: osc52}, {Name: "w" + zw + "ho", Description: c1}}}},
		Resources: []Resource{{URI: "file:///ok", Name: "n" + osc52, Title: zw, Description: big, MIMEType: "text/plain" + c1},
			{URI: "file:///bad" + bidi, Name: "bad"}},
		Templates: []Template{{URITemplate: "file:///t/{x}", Name: "t" + bidi, Title: c1, Description: osc52, MIMEType: zw},
			{URITemplate: "file:///u/{x}" + zw, Name: "bad"}},
	}
}

// jsonEsc is s as the inside of a JSON string.
func jsonEsc(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// requireSafe fails unless every field is safe under the rule (newlines
// allowed in descriptions) and within its cap.
func requireSafe(t *testing.T, what string, line []string, desc []string) {
	t.Helper()
	for _, s := range line {
		require.True(t, textsafe.Safe(s, false), "%s: %q", what, s)
		require.LessOrEqual(t, len(s), DefaultMaxTitle, what)
	}
	for _, s := range desc {
		require.True(t, textsafe.Safe(s, true), "%s: %q", what, s)
		require.LessOrEqual(t, len(s), DefaultMaxDescription, what)
	}
}

// TestListingsUnderTheRule: every name, title and description a client
// lists passes the one rule (controls, OSC 52, bidi, zero-width, C1
// escaped; newlines kept in descriptions; 8 KiB with a marker), in tools,
// their schemas and annotations, prompts and their arguments, resources
// and templates; a resource or template whose URI the rule would change
// is left out; a tool and a prompt are called by the server's own names.
func TestListingsUnderTheRule(t *testing.T) {
	b := newFake(hostileCatalog())
	var called string
	b.call = func(_ context.Context, name string, _ json.RawMessage) (ports.ToolResult, error) {
		called = name
		return ports.ToolResult{Content: json.RawMessage(`[{"type":"text","text":"ok"}]`)}, nil
	}
	s := New(b, nil)
	defer s.Close()
	cs := connect(t, s, nil)
	ctx := context.Background()

	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 2)
	for _, tl := range tools.Tools {
		annTitle := ""
		if tl.Annotations != nil {
			annTitle = tl.Annotations.Title
		}
		requireSafe(t, "tool", []string{tl.Name, tl.Title, annTitle}, []string{tl.Description})
		for _, sc := range []any{tl.InputSchema, tl.OutputSchema} {
			var v any
			require.NoError(t, json.Unmarshal(mustJSON(sc), &v))
			var texts int
			var walk func(v any)
			walk = func(v any) {
				switch v := v.(type) {
				case map[string]any:
					for k, e := range v {
						if str, ok := e.(string); ok && (k == "title" || k == "description") {
							requireSafe(t, "schema "+k, nil, []string{str})
							texts++
						} else {
							walk(e)
						}
					}
				case []any:
					for _, e := range v {
						walk(e)
					}
				}
			}
			walk(v)
			if tl.Name != "big" && sc != nil {
				assert.NotZero(t, texts)
			}
		}
	}
	in := string(mustJSON(tools.Tools[slicesIndex(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name != "big" })].InputSchema))
	assert.Contains(t, in, `"description":{"title":"\\u200b","type":"string"}`, "a property named description keeps its name; its title is escaped")
	assert.Contains(t, in, `the query\\x1b]52;c;`)
	evil := tools.Tools[slicesIndex(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name != "big" })]
	assert.Equal(t, `ev\u200bil`, evil.Name)
	assert.Equal(t, `line one`+"\n"+`line two\u202e\u009b31m\x1b]52;c;Y3VybCBldmlsfHNo\x07`, evil.Description, "newlines kept, the rest escaped")
	big := tools.Tools[slicesIndex(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "big" })]
	assert.True(t, strings.HasSuffix(big.Description, "…[cut by mcpward: 204800 bytes in all]"), "a visible marker")
	assert.Equal(t, DefaultMaxDescription, len(big.Description))
	assert.ElementsMatch(t, []string{`ev\u200bil`, "big"}, s.ToolNames())

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: evil.Name})
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Equal(t, "ev"+zw+"il", called, "called by the server's own name")

	prompts, err := cs.ListPrompts(ctx, nil)
	require.NoError(t, err)
	require.Len(t, prompts.Prompts, 1)
	p := prompts.Prompts[0]
	requireSafe(t, "prompt", []string{p.Name, p.Title}, []string{p.Description})
	require.Len(t, p.Arguments, 2)
	for _, a := range p.Arguments {
		requireSafe(t, "argument", []string{a.Name, a.Title}, []string{a.Description})
	}
	got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name, Arguments: map[string]string{"who": "you", `w\u200bho`: "x"}})
	require.NoError(t, err)
	assert.Equal(t, "p"+bidi, got.Description, "prompts/get goes to the server's own name (the fake answers with it)")
	assert.Contains(t, string(mustJSON(got.Messages)), "hi you")

	rs, err := cs.ListResources(ctx, nil)
	require.NoError(t, err)
	require.Len(t, rs.Resources, 1, "the resource whose URI the rule would change is left out")
	r := rs.Resources[0]
	requireSafe(t, "resource", []string{r.Name, r.Title, r.MIMEType}, []string{r.Description})
	ts, err := cs.ListResourceTemplates(ctx, nil)
	require.NoError(t, err)
	require.Len(t, ts.ResourceTemplates, 1)
	tp := ts.ResourceTemplates[0]
	requireSafe(t, "template", []string{tp.Name, tp.Title, tp.MIMEType}, []string{tp.Description})
	assert.GreaterOrEqual(t, s.Skipped(), 2)
}

// TestDescriptionCapOption: Options.MaxDescription and MaxTitle set the
// caps.
func TestDescriptionCapOption(t *testing.T) {
	b := newFake(Catalog{Tools: []Tool{{Name: "t", Title: strings.Repeat("T", 300), Description: strings.Repeat("d", 5000), InputSchema: objSchema}}})
	s := New(b, &Options{MaxDescription: 1000, MaxTitle: 100})
	defer s.Close()
	tools, err := connect(t, s, nil).ListTools(context.Background(), nil)
	require.NoError(t, err)
	assert.Len(t, tools.Tools[0].Description, 1000)
	assert.Len(t, tools.Tools[0].Title, 100)
	assert.Contains(t, tools.Tools[0].Description, "…[cut by mcpward: 5000 bytes in all]")
}

// TestTruncatedResultSaysSo: a result the Backend cut ends in a text block
// saying so and carries "mcpward/truncated": true in _meta; a whole result
// carries neither; prompt and resource results cut carry the _meta key.
func TestTruncatedResultSaysSo(t *testing.T) {
	b := newFake(Catalog{Tools: []Tool{{Name: "t", InputSchema: objSchema}}})
	truncated := true
	b.call = func(context.Context, string, json.RawMessage) (ports.ToolResult, error) {
		return ports.ToolResult{Content: json.RawMessage(`[{"type":"text","text":"the first part"}]`), Truncated: truncated}, nil
	}
	s := New(b, nil)
	defer s.Close()
	cs := connect(t, s, nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "t"})
	require.NoError(t, err)
	require.Len(t, res.Content, 2)
	assert.Equal(t, "the first part", res.Content[0].(*mcp.TextContent).Text)
	assert.Equal(t, TruncatedNotice, res.Content[1].(*mcp.TextContent).Text)
	assert.Equal(t, true, res.Meta[TruncatedMeta])

	truncated = false
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "t"})
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	assert.NotContains(t, res.Meta, TruncatedMeta)

	assert.Equal(t, mcp.Meta{TruncatedMeta: true}, readResult(ports.ReadResult{Truncated: true}).Meta)
	assert.Nil(t, readResult(ports.ReadResult{}).Meta)
}

func slicesIndex[T any](s []T, f func(T) bool) int {
	for i, v := range s {
		if f(v) {
			return i
		}
	}
	return -1
}
