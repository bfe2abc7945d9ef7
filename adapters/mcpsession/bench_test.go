package mcpsession

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/supervisor"
	"github.com/mcpward/mcpward/ports"
)

// The benchmarks put mcpward beside the raw go-sdk client (pinned to
// 2025-11-25) on the same in-process Streamable HTTP server (httptest, a
// plain http.Client) in the same run:
//
//	cd adapters/mcpsession
//	go test -run '^$' -bench 'Discovery10k' -benchmem -benchtime 5x -count 5 .
//	go test -run '^$' -bench 'Call' -benchmem -benchtime 3000x -count 6 .
//
// BenchmarkDiscovery10k drains 10,000 tools in 100 pages. raw is the SDK's
// ListTools loop keeping []*mcp.Tool; mcpward is Connector + catalog.Discover
// + catalog.Build (narrowing included). retained-MB is the heap the result
// keeps alive (raw: the []*mcp.Tool; mcpward: the *catalog.Catalog), measured
// after runtime.GC with the result held.
//
// BenchmarkCallAfter10k makes one tool call end to end after a 10,000-tool
// listing (each variant keeps its listing alive, as a host does). raw is
// CallTool on the raw session; session is mcpsession's Session.Call alone;
// mcpward is the catalog tool's Call (argument validation included) through
// supervisor.Server and mcpsession. p50-ns is the median of the per-call
// durations. B/op and allocs/op include the in-process server's share, the
// same in every variant.

const (
	benchTools    = 10_000
	benchPageSize = 100
	benchServer   = "bench"
	benchTool     = "tool_05000"
)

var benchArgs = json.RawMessage(`{"path":"/data/records","limit":10,"recursive":true,"options":{"encoding":"utf-8","follow":false},"tags":["a","b"]}`)

// benchSchema is a realistic input schema: five parameters, among them a
// nested object and an array; the description names the tool, so no two
// schemas are equal.
func benchSchema(i int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
		`"path":{"type":"string","description":"Path of the collection to read for tool %d"},`+
		`"limit":{"type":"integer","minimum":1,"maximum":1000,"description":"Maximum number of records"},`+
		`"recursive":{"type":"boolean","default":false},`+
		`"options":{"type":"object","properties":{"encoding":{"type":"string","enum":["utf-8","latin1"]},"follow":{"type":"boolean"}},"additionalProperties":false},`+
		`"tags":{"type":"array","items":{"type":"string"},"maxItems":10,"description":"Only records with these tags"}},`+
		`"required":["path"],"additionalProperties":false}`, i))
}

// benchHTTPServer serves 10,000 tools, 100 per page, over Streamable HTTP.
func benchHTTPServer(b *testing.B) *httptest.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1.0.0"}, &mcp.ServerOptions{PageSize: benchPageSize})
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"records":[{"id":1,"kind":"a"},{"id":2,"kind":"b"}]}`}}}, nil
	}
	for i := range benchTools {
		srv.AddTool(&mcp.Tool{
			Name:        fmt.Sprintf("tool_%05d", i),
			Description: fmt.Sprintf("Reads records of kind %d from the store and returns them as JSON lines.", i),
			InputSchema: benchSchema(i),
		}, handler)
	}
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	b.Cleanup(ts.Close)
	return ts
}

// rawSession is the raw go-sdk client, pinned to 2025-11-25, on ts.
func rawSession(b *testing.B, ts *httptest.Server) *mcp.ClientSession {
	tr := &http.Transport{}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "raw", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: tr}, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cs.Close()
		tr.CloseIdleConnections()
	})
	return cs
}

// benchConnector is mcpward's Connector on ts.
func benchConnector(ts *httptest.Server) *Connector {
	return New(DialerFunc(func(context.Context, ports.Target) (*Conn, error) {
		return httpConn(ts.URL, ts.URL), nil
	}), nil)
}

func rawListAll(b *testing.B, cs *mcp.ClientSession) []*mcp.Tool {
	var tools []*mcp.Tool
	cursor := ""
	for {
		res, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			b.Fatal(err)
		}
		tools = append(tools, res.Tools...)
		if res.NextCursor == "" {
			return tools
		}
		cursor = res.NextCursor
	}
}

func oursDiscoverBuild(b *testing.B, s ports.Session) *catalog.Catalog {
	lists, err := catalog.Discover(context.Background(), s, nil)
	if err != nil {
		b.Fatal(err)
	}
	return catalog.Build(benchServer, s.Identity(), lists, nil, nil)
}

// retainedMB measures the heap make's result keeps alive.
func retainedMB[T any](make func() T) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := make()
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / 1e6
}

var (
	sinkRaw     []*mcp.Tool
	sinkCatalog *catalog.Catalog
)

func BenchmarkDiscovery10k(b *testing.B) {
	ts := benchHTTPServer(b)

	b.Run("raw", func(b *testing.B) {
		cs := rawSession(b, ts)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			sinkRaw = rawListAll(b, cs)
		}
		b.StopTimer()
		if len(sinkRaw) != benchTools {
			b.Fatalf("listed %d tools", len(sinkRaw))
		}
		sinkRaw = nil
		b.ReportMetric(retainedMB(func() []*mcp.Tool { return rawListAll(b, cs) }), "retained-MB")
	})

	b.Run("mcpward", func(b *testing.B) {
		s, err := benchConnector(ts).Connect(context.Background(), target(benchServer), ports.Signals{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			sinkCatalog = oursDiscoverBuild(b, s)
		}
		b.StopTimer()
		if n := len(sinkCatalog.Tools); n != benchTools || !sinkCatalog.Complete() {
			b.Fatalf("catalog of %d tools, complete %v", n, sinkCatalog.Complete())
		}
		sinkCatalog = nil
		b.ReportMetric(retainedMB(func() *catalog.Catalog { return oursDiscoverBuild(b, s) }), "retained-MB")
	})
}

// reportP50 reports the median of the per-op durations.
func reportP50(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds()), "p50-ns")
}

func BenchmarkCallAfter10k(b *testing.B) {
	ts := benchHTTPServer(b)
	ctx := context.Background()

	b.Run("raw", func(b *testing.B) {
		cs := rawSession(b, ts)
		// A host keeps the listing it offers the model.
		listing := rawListAll(b, cs)
		if len(listing) != benchTools {
			b.Fatalf("listed %d tools", len(listing))
		}
		defer runtime.KeepAlive(listing)
		params := &mcp.CallToolParams{Name: benchTool, Arguments: benchArgs}
		durations := make([]time.Duration, 0, b.N)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			start := time.Now()
			res, err := cs.CallTool(ctx, params)
			durations = append(durations, time.Since(start))
			if err != nil || res.IsError {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		reportP50(b, durations)
	})

	b.Run("session", func(b *testing.B) {
		s, err := benchConnector(ts).Connect(ctx, target(benchServer), ports.Signals{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		cat := oursDiscoverBuild(b, s)
		defer runtime.KeepAlive(cat)
		r := ports.CallRequest{Name: benchTool, Arguments: benchArgs}
		durations := make([]time.Duration, 0, b.N)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			start := time.Now()
			res, err := s.Call(ctx, r)
			durations = append(durations, time.Since(start))
			if err != nil || res.IsError {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		reportP50(b, durations)
	})

	b.Run("mcpward", func(b *testing.B) {
		srv := supervisor.New(benchConnector(ts), target(benchServer), nil)
		b.Cleanup(func() { _ = srv.Close() })
		if err := srv.Connect(ctx); err != nil {
			b.Fatal(err)
		}
		cat := srv.Catalog()
		if len(cat.Tools) != benchTools {
			b.Fatalf("catalog of %d tools", len(cat.Tools))
		}
		tool, ok := cat.Tool(catalog.ToolName(benchServer, benchTool))
		if !ok {
			b.Fatal("tool not in the catalog")
		}
		durations := make([]time.Duration, 0, b.N)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			start := time.Now()
			res, err := tool.Call(ctx, benchArgs)
			durations = append(durations, time.Since(start))
			if err != nil || res.IsError {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		reportP50(b, durations)
	})
}

// BenchmarkCallInterleaved10k makes, in every op, one call of each variant
// of BenchmarkCallAfter10k (raw, session, mcpward; the order rotates) on the
// same server, so machine noise hits them alike; it reports each variant's p50
// and the p50 ratios to raw. ns/op is the sum of the three calls. Every
// variant makes its calls under the same context: context.Background in
// ctx=background, and in ctx=cancelable one that can be cancelled (a host's
// per-turn context), which mcpsession must merge with the session's own.
func BenchmarkCallInterleaved10k(b *testing.B) {
	ts := benchHTTPServer(b)
	setup := context.Background()

	cs := rawSession(b, ts)
	listing := rawListAll(b, cs)
	defer runtime.KeepAlive(listing)
	params := &mcp.CallToolParams{Name: benchTool, Arguments: benchArgs}

	s, err := benchConnector(ts).Connect(setup, target(benchServer), ports.Signals{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	cat := oursDiscoverBuild(b, s)
	defer runtime.KeepAlive(cat)
	r := ports.CallRequest{Name: benchTool, Arguments: benchArgs}

	srv := supervisor.New(benchConnector(ts), target(benchServer), nil)
	b.Cleanup(func() { _ = srv.Close() })
	if err := srv.Connect(setup); err != nil {
		b.Fatal(err)
	}
	tool, ok := srv.Catalog().Tool(catalog.ToolName(benchServer, benchTool))
	if !ok {
		b.Fatal("tool not in the catalog")
	}

	cancelable, cancel := context.WithCancel(setup)
	b.Cleanup(cancel)
	for _, c := range []struct {
		name string
		ctx  context.Context
	}{{"ctx=background", setup}, {"ctx=cancelable", cancelable}} {
		ctx := c.ctx
		b.Run(c.name, func(b *testing.B) {
			calls := [3]func() error{
				func() error { _, err := cs.CallTool(ctx, params); return err },
				func() error { _, err := s.Call(ctx, r); return err },
				func() error { _, err := tool.Call(ctx, benchArgs); return err },
			}
			var durations [3][]time.Duration
			b.ResetTimer()
			for i := range b.N {
				// Rotate the order, so no variant always runs first or last.
				for j := range 3 {
					k := (i + j) % 3
					start := time.Now()
					if err := calls[k](); err != nil {
						b.Fatal(err)
					}
					durations[k] = append(durations[k], time.Since(start))
				}
			}
			b.StopTimer()
			p50 := func(d []time.Duration) float64 {
				slices.Sort(d)
				return float64(d[len(d)/2].Nanoseconds())
			}
			raw, sess, full := p50(durations[0]), p50(durations[1]), p50(durations[2])
			b.ReportMetric(raw, "raw-p50-ns")
			b.ReportMetric(sess, "session-p50-ns")
			b.ReportMetric(full, "mcpward-p50-ns")
			b.ReportMetric(sess/raw, "session/raw")
			b.ReportMetric(full/raw, "mcpward/raw")
		})
	}
}
