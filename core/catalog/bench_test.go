package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	"github.com/mcpward/mcpward/ports"
)

// realisticToolsJSON returns the tools/list JSON of n tools shaped like
// real servers' tools: a description and five parameters, among them a
// nested object and an array. With distinct set, every schema differs (a
// parameter description names the tool), so none is shared.
func realisticToolsJSON(n int, distinct bool) []byte {
	var b []byte
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"name":"tool_%05d","description":"Reads records of kind %d from the store and returns them as JSON lines.",`+
			`"inputSchema":{"type":"object","properties":{`+
			`"path":{"type":"string","description":"Path of the collection to read%s"},`+
			`"limit":{"type":"integer","minimum":1,"maximum":1000,"description":"Maximum number of records"},`+
			`"recursive":{"type":"boolean","default":false},`+
			`"options":{"type":"object","properties":{"encoding":{"type":"string","enum":["utf-8","latin1"]},"follow":{"type":"boolean"}},"additionalProperties":false},`+
			`"tags":{"type":"array","items":{"type":"string"},"maxItems":10,"description":"Only records with these tags"}},`+
			`"required":["path"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}}`, i, i, suffix(distinct, i))
	}
	return append(b, ']')
}

func suffix(distinct bool, i int) string {
	if !distinct {
		return ""
	}
	return fmt.Sprintf(" for tool %d", i)
}

// decodeTools decodes tools as the session adapter hands them over.
func decodeTools(tb testing.TB, data []byte) []ports.ToolItem {
	var raw []struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		InputSchema any            `json:"inputSchema"`
		Meta        map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		tb.Fatal(err)
	}
	items := make([]ports.ToolItem, len(raw))
	for i, r := range raw {
		items[i] = ports.ToolItem{Name: r.Name, Description: r.Description, InputSchema: r.InputSchema, Meta: r.Meta}
	}
	return items
}

var (
	sinkCatalog *Catalog
	sinkItems   []ports.ToolItem
)

// BenchmarkBuild10k builds the catalog of 10,000 realistic tools, once
// with one schema shared by all (as tools generated from one template
// are) and once with 10,000 different schemas. It reports retained-B: the
// heap the built catalog keeps alive (narrowed schemas, names,
// descriptions, lookup map) once the decoded listing is garbage.
// json.Unmarshal is the decode of the same listing into maps, as the SDK
// does it, for scale.
func BenchmarkBuild10k(b *testing.B) {
	for _, distinct := range []bool{false, true} {
		name := "shared"
		if distinct {
			name = "distinct"
		}
		data := realisticToolsJSON(10_000, distinct)
		b.Run(name+"/build", func(b *testing.B) {
			items := decodeTools(b, data)
			l := Lists{Tools: items}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				sinkCatalog = Build("store", ports.SessionIdentity{}, l, nil, nil)
			}
			b.StopTimer()
			if len(sinkCatalog.Tools) != 10_000 || len(sinkCatalog.Diagnostics) != 0 {
				b.Fatalf("built %d tools, %d diagnostics", len(sinkCatalog.Tools), len(sinkCatalog.Diagnostics))
			}
			b.ReportMetric(float64(retainedBytes(b, data)), "retained-B")
		})
		b.Run(name+"/json.Unmarshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				decodeTools(b, data)
			}
		})
	}
}

// retainedBytes measures the live heap a catalog built from data keeps.
func retainedBytes(tb testing.TB, data []byte) uint64 {
	sinkCatalog = nil
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cat := func() *Catalog {
		return Build("store", ports.SessionIdentity{}, Lists{Tools: decodeTools(tb, data)}, nil, nil)
	}()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(cat)
	return after.HeapAlloc - before.HeapAlloc
}

// BenchmarkNarrow narrows one realistic schema; json.Unmarshal decodes the
// same schema's JSON into an any, as the SDK does, for scale.
func BenchmarkNarrow(b *testing.B) {
	items := decodeTools(b, realisticToolsJSON(1, false))
	raw, err := json.Marshal(items[0].InputSchema)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("narrow", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Narrow(items[0].InputSchema)
		}
	})
	b.Run("narrower", func(b *testing.B) {
		// What Build does per tool: a reused narrower, no copy.
		var n narrower
		b.ReportAllocs()
		for b.Loop() {
			n.reset()
			n.rootTree(items[0].InputSchema)
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCall is one call through Tool.Call: validation, the Caller and
// the admission of a small result.
func BenchmarkCall(b *testing.B) {
	items := decodeTools(b, realisticToolsJSON(1, false))
	c := &fakeCaller{res: ports.CallResult{Content: json.RawMessage(`[{"type":"text","text":"{\"id\":1,\"name\":\"record\"}"}]`)}}
	c.fn = func(context.Context, ports.CallRequest) (ports.CallResult, error) { return c.res, nil }
	cat := Build("store", ports.SessionIdentity{}, Lists{Tools: items}, c, nil)
	tool := cat.Tools[0]
	args := json.RawMessage(`{"path":"/data/records","limit":50,"options":{"encoding":"utf-8"},"tags":["a","b"]}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.Call(ctx, args); err != nil {
			b.Fatal(err)
		}
	}
}

// decodingSession serves pages of tools JSON, decoding each page on List
// as the SDK does, so Discover's cost can be put beside the decode's.
type decodingSession struct {
	ports.Session // the content methods, never called
	pages         [][]byte
	tb            testing.TB
}

func (s decodingSession) Identity() ports.SessionIdentity {
	return ports.SessionIdentity{ServerID: "store", Declared: []ports.ListKind{ports.ListTools}}
}

func (s decodingSession) List(_ context.Context, _ ports.ListKind, cursor string) (ports.Page, error) {
	i := 0
	if cursor != "" {
		fmt.Sscanf(cursor, "p%d", &i)
	}
	p := ports.Page{Tools: decodeTools(s.tb, s.pages[i])}
	if i+1 < len(s.pages) {
		p.NextCursor = fmt.Sprintf("p%d", i+1)
	}
	return p, nil
}

func (decodingSession) Call(context.Context, ports.CallRequest) (ports.CallResult, error) {
	return ports.CallResult{}, nil
}
func (decodingSession) Done() <-chan struct{} { return nil }
func (decodingSession) Close() error          { return nil }

// BenchmarkDiscoverBuild10k discovers 10,000 distinct realistic tools in
// 100 pages and builds the catalog ("mcpward"); "decode" only decodes the
// same 100 pages and keeps the items, the part of the work an SDK client
// listing every page does in any case.
// The ratio of the two is the cost of bounded discovery, narrowing and
// Build on top of the decode (network and server excluded).
func BenchmarkDiscoverBuild10k(b *testing.B) {
	var pages [][]byte
	for p := range 100 {
		var buf []byte
		buf = append(buf, '[')
		for i := range 100 {
			if i > 0 {
				buf = append(buf, ',')
			}
			one := realisticToolsJSON(1, false)
			one = bytes.Replace(one, []byte("tool_00000"), fmt.Appendf(nil, "tool_%05d", p*100+i), 1)
			one = bytes.Replace(one, []byte("to read"), fmt.Appendf(nil, "to read %d", p*100+i), 1)
			buf = append(buf, one[1:len(one)-1]...)
		}
		pages = append(pages, append(buf, ']'))
	}
	sess := decodingSession{pages: pages, tb: b}
	b.Run("mcpward", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l, err := Discover(context.Background(), sess, nil)
			if err != nil {
				b.Fatal(err)
			}
			sinkCatalog = Build("store", sess.Identity(), l, nil, nil)
		}
		if len(sinkCatalog.Tools) != 10_000 || !sinkCatalog.Complete() {
			b.Fatalf("built %d tools", len(sinkCatalog.Tools))
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			// Kept until the end, as a client listing every page keeps
			// its result.
			var all []ports.ToolItem
			for _, p := range pages {
				all = append(all, decodeTools(b, p)...)
			}
			sinkItems = all
		}
	})
}

// BenchmarkSpec is one Spec of a tool whose schema was packed against
// earlier ones (the last of 10,000 distinct realistic tools): the cost of
// expanding the packed schema.
func BenchmarkSpec(b *testing.B) {
	cat := Build("store", ports.SessionIdentity{}, Lists{Tools: decodeTools(b, realisticToolsJSON(10_000, true))}, nil, nil)
	tool := cat.Tools[len(cat.Tools)-1]
	b.ReportAllocs()
	for b.Loop() {
		if len(tool.Spec().InputSchema) == 0 {
			b.Fatal("empty schema")
		}
	}
}

// BenchmarkToolSize is Discover's byte count of 10,000 realistic tools
// (see toolSize), the part of BenchmarkDiscoverBuild10k the byte bound
// adds.
func BenchmarkToolSize(b *testing.B) {
	tools := decodeTools(b, realisticToolsJSON(10_000, true))
	b.ReportAllocs()
	for b.Loop() {
		var n int64
		for i := range tools {
			n += toolSize(&tools[i], DefaultMaxBytes)
		}
		if n == 0 {
			b.Fatal("no size")
		}
	}
}
