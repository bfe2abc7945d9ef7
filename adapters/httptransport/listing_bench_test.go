package httptransport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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

// listingPage is a tools/list answer as the listing server writes it: 100
// tools with their schemas, about 75 KiB.
func listingPage() []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":3,"result":{"nextCursor":"abc","tools":[`)
	for i := range 100 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"catalog_%05d","description":"Reads records from collection %d.","inputSchema":{"type":"object","properties":{`+
			`"path":{"type":"string","description":"Path of the collection to read for tool %d"},`+
			`"limit":{"type":"integer","minimum":1,"maximum":1000,"description":"Maximum number of records"},`+
			`"recursive":{"type":"boolean","default":false},`+
			`"options":{"type":"object","properties":{"encoding":{"type":"string","enum":["utf-8","latin1"]},"follow":{"type":"boolean"}},"additionalProperties":false},`+
			`"tags":{"type":"array","items":{"type":"string"},"maxItems":10,"description":"Only records with these tags"}},`+
			`"required":["path"],"additionalProperties":false}}`, i, i, i)
	}
	b.WriteString(`]}}`)
	return b.Bytes()
}

// BenchmarkPageBody reads one tools/list page (about 75 KiB) as the
// transport reads an answer's body, in reads of at most 4 KiB (as a
// chunked HTTP body arrives): sse, the page as one event through the SSE
// reader (as processStream does); json, the page as a JSON body read
// under the receive cap (capBody) and recycled once decoded (as conn
// does). The message's decoding is left out: this is the framing alone.
//
//	cd adapters/httptransport
//	go test -run '^$' -bench PageBody -count 5
func BenchmarkPageBody(b *testing.B) {
	page := listingPage()
	b.Run("sse", func(b *testing.B) {
		stream := append(append([]byte("event: message\ndata: "), page...), "\n\n"...)
		r := &failingPieces{}
		b.SetBytes(int64(len(stream)))
		b.ReportAllocs()
		for range b.N {
			r.b, r.n = stream, 4<<10
			s := newSSEReader(r, DefaultReceiveCap)
			ev, err := s.next()
			if err != nil || len(ev.data) != len(page) {
				b.Fatal("event not read")
			}
			s.release()
		}
	})
	b.Run("json", func(b *testing.B) {
		rt := &roundTripper{cap: DefaultReceiveCap}
		r := &failingPieces{}
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/", nil)
		b.SetBytes(int64(len(page)))
		b.ReportAllocs()
		for range b.N {
			r.b, r.n = page, 4<<10
			resp, err := rt.capBody(&http.Response{Body: io.NopCloser(r), ContentLength: -1, Request: req})
			if err != nil || resp.ContentLength != int64(len(page)) {
				b.Fatal("body not read")
			}
			resp.Body.(*bufferedBody).recycle()
		}
	})
}
