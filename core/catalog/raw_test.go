package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// rawLists is a tools list whose tool "in" has the input schema in and
// whose tool "out" has an object input schema and the output schema out.
func rawLists(in, out any) []ports.ToolItem {
	return []ports.ToolItem{
		{Name: "in", Description: "d", InputSchema: in},
		{Name: "out", Title: "o", InputSchema: map[string]any{"type": "object"}, OutputSchema: out},
	}
}

// toolView is everything Build says about one tool.
type toolView struct {
	Spec           ports.ToolSpec
	Narrowed       []string
	OutputNarrowed []string
}

// catalogView is everything Build says about a catalog.
type catalogView struct {
	Tools       []toolView
	Rejected    []Rejected
	Diagnostics []Diagnostic
}

func viewOf(c *Catalog) catalogView {
	v := catalogView{Rejected: c.Rejected, Diagnostics: c.Diagnostics}
	for _, t := range c.Tools {
		v.Tools = append(v.Tools, toolView{Spec: t.Spec(), Narrowed: t.Narrowed(), OutputNarrowed: t.OutputNarrowed()})
	}
	return v
}

// oneSession serves one tools page.
type oneSession struct {
	fuzzSession
	tools []ports.ToolItem
}

func (s *oneSession) List(_ context.Context, kind ports.ListKind, cursor string) (ports.Page, error) {
	return ports.Page{Tools: s.tools}, nil
}

// discoverBuild builds the catalog of tools through Discover (whose
// preparer narrows them) and through Build alone, checks that both agree
// and returns it.
func discoverBuild(t *testing.T, tools []ports.ToolItem) catalogView {
	t.Helper()
	id := ports.SessionIdentity{ServerID: "srv", Declared: []ports.ListKind{ports.ListTools}}
	sess := &oneSession{fuzzSession: fuzzSession{id: id}, tools: tools}
	l, err := Discover(context.Background(), sess, &DiscoverOptions{MaxBytes: math.MaxInt32})
	require.NoError(t, err)
	require.Len(t, l.Tools, len(tools))
	viaDiscover := viewOf(Build("srv", id, l, nil, nil))
	alone := viewOf(Build("srv", id, Lists{Tools: tools}, nil, nil))
	require.Equal(t, alone, viaDiscover)
	return alone
}

// sizes returns toolSize of each tool with no bound.
func sizes(tools []ports.ToolItem) []int64 {
	var out []int64
	for i := range tools {
		out = append(out, toolSize(&tools[i], math.MaxInt64))
	}
	return out
}

// checkRawAgrees checks the contract of a json.RawMessage schema: a
// catalog of tools whose schemas are b is the catalog of the same tools
// with the schemas Unmarshal decodes from b (every Spec byte for byte,
// Narrowed, OutputNarrowed, Rejected, Diagnostics), through Build alone
// and through Discover; Narrow agrees; toolSize agrees (and so Discover's
// byte bound). Bytes Unmarshal refuses are an invalid schema: the input
// schema is rejected ("invalid_input_schema"), the output schema reported
// invalid ("output_schema_invalid", none for zero bytes), and toolSize
// counts their length.
func checkRawAgrees(t *testing.T, b []byte) {
	raw := json.RawMessage(b)
	rawTools := rawLists(raw, raw)
	got := discoverBuild(t, rawTools)
	gotN, gotD := Narrow(raw)
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		// No tree counterpart: nothing decoded, an invalid schema.
		refused := rawLists(invalidSchema{}, invalidSchema{})
		want := discoverBuild(t, refused)
		if len(b) == 0 {
			want = discoverBuild(t, rawLists(invalidSchema{}, nil))
		}
		require.Equal(t, want, got)
		wantN, wantD := Narrow(nil)
		require.Equal(t, string(wantN), string(gotN))
		require.Equal(t, wantD, gotD)
		base := sizes(rawLists(nil, nil))
		s := sizes(rawTools)
		require.Equal(t, base[0]-4+int64(len(b)), s[0], "a refused input schema counts its length")
		require.Equal(t, base[1]+int64(len(b)), s[1], "a refused output schema counts its length")
		return
	}
	treeTools := rawLists(tree, tree)
	require.Equal(t, discoverBuild(t, treeTools), got)
	wantN, wantD := Narrow(tree)
	require.Equal(t, string(wantN), string(gotN))
	require.Equal(t, wantD, gotD)
	require.Equal(t, sizes(treeTools), sizes(rawTools))
	// With a bound, the tree's walk stops early; both exceed it alike.
	for i := range rawTools {
		full := toolSize(&treeTools[i], math.MaxInt64)
		for _, limit := range []int64{full - 1, full, full / 2} {
			tr, rw := toolSize(&treeTools[i], limit), toolSize(&rawTools[i], limit)
			require.Equal(t, tr > limit, rw > limit)
			if tr <= limit {
				require.Equal(t, tr, rw)
			}
		}
	}
}

// invalidSchema is a Go value that is no schema at all, which Build treats
// like any value that is not an object.
type invalidSchema struct{}

// rawSeeds are hostile and ordinary schemas as bytes.
func rawSeeds(tb testing.TB) [][]byte {
	seeds := [][]byte{
		nil, []byte(""), []byte(" "), []byte("null"), []byte(" null "), []byte("{}"), []byte(" { } "),
		[]byte("[]"), []byte(`"object"`), []byte("1"), []byte("-0"), []byte("1e308"), []byte("1e309"), []byte("-1e400"),
		[]byte("1e-400"), []byte(`{"type":"object"}`), []byte(`{"type":"string"}`), []byte(`{"type":["object"]}`),
		[]byte(`{"type":"object","type":"string"}`), []byte(`{"type":"string","type":"object"}`),
		[]byte(`{"\u0074ype":"string"}`), []byte(`{"type":"\u006fbject","properties":{"a\u002fb~":{"type":"integer","minimum":-0,"maximum":1e308}}}`),
		[]byte(`{"properties":{"a":{"type":"string"},"a":{"type":"number","minimum":0.1}},"required":["a","a"]}`),
		[]byte("{\"properties\":{\"\xff\":{\"description\":\"\xfe\xff x\"}},\"title\":\"\xc3\"}"),
		[]byte(`{"properties":{"<&>":{"enum":["\u2028","\u2029","\ud800","\ud83d\ude00","\u0000"]}}}`),
		[]byte(`{"properties":{"x":{"const":1.0,"default":[1e21,1e20,1e-7,0.000001,123456789012345678,-0.0,5e-324]}}}`),
		[]byte(`{"properties":{"h":{"type":"string","x-mcp-header":"X-Region"},"g":{"x-mcp-header":"\u0058-A","type":"string"}}}`),
		[]byte(`{"properties":{"p":{"pattern":"^[a-z]+$","minLength":1.5,"maxLength":2}},"patternProperties":{"x":{}},"additionalProperties":false}`),
		[]byte(`{"$ref":"#/$defs/a","$defs":{"a":{}},"title":"t"}`),
		[]byte(`{"type":"object"} x`), []byte(`{"type":"object"`), []byte(`{"a":01}`), []byte("\t{\"properties\" :\n{ \"a\" : { } } }\r\n"),
		[]byte(`{"properties":{"a":{"items":[{}],"additionalProperties":{"anyOf":[]}}},"items":{"type":"x"}}`),
		[]byte(`{"description":"a\nb\"c\\d\/e","examples":[{"b":1,"a":2,"b":3}],"default":{"z":{},"y":[]}}`),
	}
	for _, depth := range []int{30, 31, 32, 33, 34, 63, 64, 65, 66, 126, 127, 128, 129, 130, 10_000, 10_001} {
		// Nested properties, arrays and objects around the bounds.
		props := strings.Repeat(`{"properties":{"a":`, depth/2) + "{}" + strings.Repeat("}}", depth/2)
		seeds = append(seeds, []byte(props))
		arr := `{"default":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "}"
		seeds = append(seeds, []byte(arr))
		obj := strings.Repeat(`{"b":1,"a":`, depth) + "1" + strings.Repeat("}", depth)
		seeds = append(seeds, []byte(obj))
	}
	files, err := filepath.Glob("testdata/narrow/*.json")
	require.NoError(tb, err)
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(tb, err)
		seeds = append(seeds, b)
	}
	return seeds
}

// TestRawSchemaAgrees runs checkRawAgrees over the seeds: the edge cases
// named in ports.ToolItem's contract.
func TestRawSchemaAgrees(t *testing.T) {
	for _, b := range rawSeeds(t) {
		name := string(b)
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) { checkRawAgrees(t, b) })
	}
}

// FuzzRawSchemaAgrees holds a raw schema's catalog to the decoded one's
// on any bytes (see checkRawAgrees).
func FuzzRawSchemaAgrees(f *testing.F) {
	for _, b := range rawSeeds(f) {
		f.Add(b)
	}
	for _, s := range fuzzSeeds() {
		// FuzzBuild's corpus is generator input, not JSON; its schemas
		// are the testdata files above. Its bytes still make odd JSON.
		f.Add(s)
	}
	f.Fuzz(checkRawAgrees)
}

// fixtureSchema is tool i's input schema in bench/internal/fixture
// (catalogSchema), which the listing benchmarks serve.
func fixtureSchema(i int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
		`"path":{"type":"string","description":"Path of the collection to read for tool %d"},`+
		`"limit":{"type":"integer","minimum":1,"maximum":1000,"description":"Maximum number of records"},`+
		`"recursive":{"type":"boolean","default":false},`+
		`"options":{"type":"object","properties":{"encoding":{"type":"string","enum":["utf-8","latin1"]},"follow":{"type":"boolean"}},"additionalProperties":false},`+
		`"tags":{"type":"array","items":{"type":"string"},"maxItems":10,"description":"Only records with these tags"}},`+
		`"required":["path"],"additionalProperties":false}`, i))
}

// pagedSession serves ready tools in pages of 100.
type pagedSession struct {
	fuzzSession
	tools []ports.ToolItem
}

func (s *pagedSession) List(_ context.Context, kind ports.ListKind, cursor string) (ports.Page, error) {
	i, _ := strconv.Atoi(cursor)
	end := min(i+100, len(s.tools))
	p := ports.Page{Tools: s.tools[i:end]}
	if end < len(s.tools) {
		p.NextCursor = strconv.Itoa(end)
	}
	return p, nil
}

// BenchmarkRawSchema10k builds the catalog of the fixture's 10,000 tools
// whose schemas are decoded trees ("tree", the decoding not counted),
// json.RawMessage ("raw"), or decoded by encoding/json within the loop
// ("decode+tree", what a tree costs in all); "build" is Build alone,
// "discover" Discover (100 pages, its preparer) and Build.
func BenchmarkRawSchema10k(b *testing.B) {
	const n = 10_000
	raws := make([]json.RawMessage, n)
	for i := range raws {
		raws[i] = fixtureSchema(i)
	}
	items := func(decode bool) []ports.ToolItem {
		tools := make([]ports.ToolItem, n)
		for i := range tools {
			tools[i] = ports.ToolItem{Name: fmt.Sprintf("tool_%05d", i), Description: "Reads records.", InputSchema: raws[i]}
			if decode {
				var v any
				if err := json.Unmarshal(raws[i], &v); err != nil {
					b.Fatal(err)
				}
				tools[i].InputSchema = v
			}
		}
		return tools
	}
	check := func(b *testing.B) {
		if len(sinkCatalog.Tools) != n || len(sinkCatalog.Diagnostics) != 0 {
			b.Fatalf("built %d tools, %d diagnostics", len(sinkCatalog.Tools), len(sinkCatalog.Diagnostics))
		}
	}
	id := ports.SessionIdentity{ServerID: "store", Declared: []ports.ListKind{ports.ListTools}}
	for _, mode := range []string{"tree", "raw", "decode+tree"} {
		b.Run("build/"+mode, func(b *testing.B) {
			tools := items(mode == "tree")
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				l := tools
				if mode == "decode+tree" {
					l = items(true)
				}
				sinkCatalog = Build("store", id, Lists{Tools: l}, nil, nil)
			}
			check(b)
		})
		b.Run("discover/"+mode, func(b *testing.B) {
			sess := &pagedSession{fuzzSession: fuzzSession{id: id}, tools: items(mode == "tree")}
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				if mode == "decode+tree" {
					sess.tools = items(true)
				}
				l, err := Discover(context.Background(), sess, nil)
				if err != nil {
					b.Fatal(err)
				}
				sinkCatalog = Build("store", id, l, nil, nil)
			}
			check(b)
		})
	}
}

// FuzzCanon holds canon to encoding/json on any bytes: refused exactly
// when Unmarshal refuses; otherwise, for a value nested at most
// maxValueDepth deep, the canonical form is what the encoder writes for
// the decoded value and the size its valueSize; for a deeper one, the
// decoded value itself.
func FuzzCanon(f *testing.F) {
	for _, b := range rawSeeds(f) {
		f.Add(b)
	}
	for _, s := range []string{`"\u00"`, `"\x"`, "\"\x1f\"", `[1,]`, `{"a":1,}`, `{"a" 1}`, `{1:2}`, `tru`, `nul`, `falsey`,
		`-`, `-01`, `1.`, `.5`, `1e`, `1e+`, `+1`, `0x1`, `[`, `]`, `{"a":[}`, "\"\\ud800\\udc00\"", `"\uD83D"`, "[\"\xed\xa0\x80\"]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var c canon
		got := c.run(b)
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			require.Equal(t, rawRefused, got)
			return
		}
		var e encoder
		if !e.value(v, 0) {
			require.Equal(t, rawDeep, got)
			require.Equal(t, v, c.takeTree())
			return
		}
		require.Equal(t, rawOK, got)
		require.Equal(t, string(e.buf), string(c.out))
		require.Equal(t, valueSize(v, 0, math.MaxInt64, 0), c.size)
	})
}

// reportCPU returns a func that reports the process's CPU time (user and
// system, all goroutines, the collector's included) per op since
// reportCPU was called: on a shared machine it varies less than ns/op.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") }
}

func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// TestRawSchemaEdgeCases spells out what a raw schema comes to in the
// cases ports.ToolItem's contract names (FuzzRawSchemaAgrees holds every
// case to the decoded schema's catalog).
func TestRawSchemaEdgeCases(t *testing.T) {
	deep := `{"default":` + strings.Repeat("[", 130) + strings.Repeat("]", 130) + `}`
	for _, tc := range []struct {
		name, in, out string
		// narrowed and written are the Spec's InputSchema and
		// ServerInputSchema; reject the reason the tool is rejected
		// for; diags the diagnostics' reasons.
		narrowed, written, outSchema, reject string
		dropped, diags                       []string
	}{
		{name: "duplicates, the last wins", in: `{"type":"string","type":"object","properties":{"a":{"type":"string"},"a":{"type":"integer"}}}`,
			narrowed: `{"properties":{"a":{"type":"integer"}},"type":"object"}`, written: `{"properties":{"a":{"type":"integer"}},"type":"object"}`},
		{name: "escaped name", in: `{"\u0074ype":"string"}`, reject: ReasonInvalidInputSchema},
		{name: "escapes, -0, 1e308", in: `{"properties":{"\u0061\/b":{"minimum":-0,"maximum":1e308,"maxLength":2.0}}}`,
			narrowed: `{"properties":{"a/b":{"maxLength":2,"maximum":1e+308,"minimum":-0}},"type":"object"}`,
			written:  `{"properties":{"a/b":{"maxLength":2,"maximum":1e+308,"minimum":-0}}}`},
		{name: "invalid UTF-8", in: "{\"title\":\"a\xffb\",\"properties\":{\"\xfe\":{}}}",
			narrowed: `{"properties":{"` + "\uFFFD" + `":{}},"title":"a` + "\uFFFD" + `b","type":"object"}`,
			written:  `{"properties":{"` + "\uFFFD" + `":{}},"title":"a` + "\uFFFD" + `b"}`},
		{name: "HTML characters escaped", in: `{"properties":{"<&>":{"const":"\u2028"}}}`,
			narrowed: `{"properties":{"\u003c\u0026\u003e":{"const":"\u2028"}},"type":"object"}`,
			written:  `{"properties":{"\u003c\u0026\u003e":{"const":"\u2028"}}}`},
		{name: "whitespace", in: " {\n\t\"type\" : \"object\" }\r\n", narrowed: `{"type":"object"}`, written: `{"type":"object"}`},
		{name: "x-mcp-header left out when narrowed", in: `{"properties":{"h":{"x-mcp-header":"X-Region","type":"string"}}}`,
			narrowed: `{"properties":{"h":{"type":"string"}},"type":"object"}`,
			written:  `{"properties":{"h":{"type":"string","x-mcp-header":"X-Region"}}}`},
		{name: "nested past 128 levels", in: deep, narrowed: `{"type":"object"}`, diags: []string{DiagInputSchemaTooDeep}},
		{name: "nested past 32 schema levels", in: strings.Repeat(`{"properties":{"a":`, 34) + `{"type":"string"}` + strings.Repeat("}}", 34),
			narrowed: `{"properties":{"a":` + strings.Repeat(`{"properties":{"a":`, 32) + `{}` + strings.Repeat("}}", 32) + `},"type":"object"}`,
			written:  strings.Repeat(`{"properties":{"a":`, 34) + `{"type":"string"}` + strings.Repeat("}}", 34),
			dropped:  []string{strings.Repeat("/properties/a", 33)}, diags: []string{DiagSchemaNarrowed}},
		{name: "trailing bytes", in: `{"type":"object"} x`, reject: ReasonInvalidInputSchema},
		{name: "number out of range", in: `{"minimum":1e400}`, reject: ReasonInvalidInputSchema},
		{name: "nesting past encoding/json's limit", in: strings.Repeat("[", 10_001) + strings.Repeat("]", 10_001), reject: ReasonInvalidInputSchema},
		{name: "empty", in: ``, reject: ReasonInvalidInputSchema},
		{name: "null input", in: `null`, reject: ReasonInvalidInputSchema},
		{name: "null output", in: `{}`, out: `null`, narrowed: `{"type":"object"}`, written: `{}`},
		{name: "output out of range", in: `{}`, out: `{"maximum":-1e309}`, narrowed: `{"type":"object"}`, written: `{}`, diags: []string{DiagOutputSchemaInvalid}},
		{name: "output not an object", in: `{}`, out: `[{}]`, narrowed: `{"type":"object"}`, written: `{}`, diags: []string{DiagOutputSchemaInvalid}},
		{name: "output", in: `{}`, out: `{"properties":{"n":{"type":"number","type":"integer"}}}`, narrowed: `{"type":"object"}`, written: `{}`,
			outSchema: `{"properties":{"n":{"type":"integer"}},"type":"object"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			it := ports.ToolItem{Name: "t", InputSchema: json.RawMessage(tc.in)}
			if tc.out != "" {
				it.OutputSchema = json.RawMessage(tc.out)
			}
			cat := Build("srv", ports.SessionIdentity{ServerID: "srv"}, Lists{Tools: []ports.ToolItem{it}}, nil, nil)
			if tc.reject != "" {
				require.Empty(t, cat.Tools)
				require.Equal(t, []Rejected{{Server: "srv", Kind: ports.ListTools, Name: "t", Reason: tc.reject}}, cat.Rejected)
				return
			}
			require.Len(t, cat.Tools, 1)
			s := cat.Tools[0].Spec()
			require.Equal(t, tc.narrowed, string(s.InputSchema))
			require.Equal(t, tc.written, string(s.ServerInputSchema))
			require.Equal(t, tc.outSchema, string(s.OutputSchema))
			require.Equal(t, tc.dropped, cat.Tools[0].Narrowed())
			var diags []string
			for _, d := range cat.Diagnostics {
				diags = append(diags, d.Reason)
			}
			require.Equal(t, tc.diags, diags)
		})
	}
}

// twinSchemas returns FuzzBuild's generated schema v as raw bytes (what
// encoding/json writes for it) and as the value those bytes decode to;
// a value encoding/json cannot write, or whose bytes it cannot read back,
// becomes {} in both.
func twinSchemas(v any) (raw, tree any) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err == nil {
		var d any
		if err = json.Unmarshal(b, &d); err == nil {
			return json.RawMessage(b), d
		}
	}
	return json.RawMessage("{}"), map[string]any{}
}

// twins returns two copies of s whose tools' schemas are raw bytes in one
// and the values they decode to in the other (see twinSchemas).
func twins(s *fuzzSession) (raw, tree *fuzzSession) {
	raw = &fuzzSession{id: s.id, pages: map[ports.ListKind][]fuzzPage{}}
	tree = &fuzzSession{id: s.id, pages: map[ports.ListKind][]fuzzPage{}}
	for k, pages := range s.pages {
		for _, p := range pages {
			rp, tp := p, p
			rp.page.Tools, tp.page.Tools = nil, nil
			for _, it := range p.page.Tools {
				r, tr := it, it
				r.InputSchema, tr.InputSchema = twinSchemas(it.InputSchema)
				r.OutputSchema, tr.OutputSchema = twinSchemas(it.OutputSchema)
				rp.page.Tools = append(rp.page.Tools, r)
				tp.page.Tools = append(tp.page.Tools, tr)
			}
			raw.pages[k] = append(raw.pages[k], rp)
			tree.pages[k] = append(tree.pages[k], tp)
		}
	}
	return raw, tree
}

// FuzzRawDiscoverAgrees runs FuzzBuild's generated servers (many pages,
// tight bounds, odd cursors) once with every tool schema as raw bytes and
// once as the value those bytes decode to: Discover keeps the same tools
// and marks the same lists partial (the byte bound counts alike), and the
// catalogs Build makes of both agree.
func FuzzRawDiscoverAgrees(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{b: data, shallow: true}
		sess, opts := g.session("srv")
		rawSess, treeSess := twins(sess)
		rl, rerr := Discover(context.Background(), rawSess, opts)
		tl, terr := Discover(context.Background(), treeSess, opts)
		require.Equal(t, terr, rerr)
		require.Equal(t, tl.Partial, rl.Partial)
		require.Equal(t, len(tl.Tools), len(rl.Tools))
		require.Equal(t, tl.Dropped, rl.Dropped)
		require.Equal(t, viewOf(Build("srv", sess.id, tl, nil, nil)), viewOf(Build("srv", sess.id, rl, nil, nil)))
	})
}
