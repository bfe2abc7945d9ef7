package httptransport

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/core/egress"
)

// listingServer is the benchmark's catalog server (bench/internal/fixture):
// n tools, each with a schema of its own (five parameters, a nested object
// and an array), listed in pages of 100.
func listingServer(n int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "listing", Version: "1"}, &mcp.ServerOptions{PageSize: 100})
	h := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	for i := range n {
		s.AddTool(&mcp.Tool{
			Name:        fmt.Sprintf("catalog_%05d", i),
			Description: fmt.Sprintf("Reads records from collection %d.", i),
			InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
				`"path":{"type":"string","description":"Path of the collection to read for tool %d"},`+
				`"limit":{"type":"integer","minimum":1,"maximum":1000,"description":"Maximum number of records"},`+
				`"recursive":{"type":"boolean","default":false},`+
				`"options":{"type":"object","properties":{"encoding":{"type":"string","enum":["utf-8","latin1"]},"follow":{"type":"boolean"}},"additionalProperties":false},`+
				`"tags":{"type":"array","items":{"type":"string"},"maxItems":10,"description":"Only records with these tags"}},`+
				`"required":["path"],"additionalProperties":false}`, i)),
		}, h)
	}
	return s
}

// BenchmarkListing10k lists 10,000 tools (100 pages) per op through
// mcpward's transport with the go-sdk's client session, per protocol era
// (legacy: protocol sessions, pinned 2025-11-25; modern: stateless,
// 2026-07-28) and answer body (the go-sdk server's SSE stream, or JSON):
// the transport's share of a listing over HTTP (#28). The SDK's decoding
// of the pages is the same in every run; compare B/op and allocs/op
// between builds.
//
//	cd adapters/httptransport
//	go test -run '^$' -bench Listing10k -benchtime 10x -count 1
func BenchmarkListing10k(b *testing.B) {
	s := listingServer(10_000)
	for _, modern := range []bool{false, true} {
		for _, jsonBody := range []bool{false, true} {
			name := map[bool]string{false: "legacy", true: "modern"}[modern] + "/" + map[bool]string{false: "sse", true: "json"}[jsonBody]
			b.Run(name, func(b *testing.B) {
				srv := httptest.NewServer(mcpHandler(s, &mcp.StreamableHTTPOptions{Stateless: modern, JSONResponse: jsonBody}))
				defer srv.Close()
				tr, err := New(egress.Default(), safeOptions()).Transport(context.Background(), httpTarget("bench", srv.URL+"/mcp", nil), nil)
				if err != nil {
					b.Fatal("transport refused")
				}
				defer tr.CloseIdleConnections()
				tr.SetInboundFilter(func(string, bool) bool { return true })
				var opts *mcp.ClientSessionOptions
				if !modern {
					opts = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
				}
				cs, err := benchClient.Connect(context.Background(), tr, opts)
				if err != nil {
					b.Fatal("connect failed")
				}
				defer cs.Close()
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					n := 0
					params := &mcp.ListToolsParams{}
					for {
						res, err := cs.ListTools(context.Background(), params)
						if err != nil {
							b.Fatal("list failed")
						}
						n += len(res.Tools)
						if res.NextCursor == "" {
							break
						}
						params.Cursor = res.NextCursor
					}
					if n != 10_000 {
						b.Fatalf("listed %d tools", n)
					}
				}
			})
		}
	}
}
