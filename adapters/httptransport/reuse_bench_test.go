package httptransport

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/core/egress"
)

// BenchmarkSSECallFiltered is one tools/call of the echo tool answered as
// an SSE stream through mcpward's transport with the inbound filter set
// (as mcpsession sets it), each call under a context that ends when it
// returns (as the supervisor's call timeout does). It reports the
// allocation per call and conns/op, the new TCP connections per call.
func BenchmarkSSECallFiltered(b *testing.B) {
	srv := newTestServer(b, false, mcpHandler(newMCPServer(), nil))
	tr, err := New(egress.Default(), safeOptions()).Transport(context.Background(), httpTarget("bench", srv.URL+"/mcp", nil), nil)
	if err != nil {
		b.Fatal("transport refused")
	}
	defer tr.CloseIdleConnections()
	tr.SetInboundFilter(func(string, bool) bool { return true })
	cs := benchConnect(b, tr)
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"msg": "hello"}}
	before := srv.accepts()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		ctx, cancel := context.WithCancel(context.Background())
		res, err := cs.CallTool(ctx, params)
		cancel()
		if err != nil || res.IsError {
			b.Fatal("echo failed")
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(srv.accepts()-before)/float64(b.N), "conns/op")
}

// BenchmarkSSEReaderAnswer is the SSE parser reading one stream holding
// a single answer, as a call's stream does.
func BenchmarkSSEReaderAnswer(b *testing.B) {
	stream := sseEvent(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hello"}]}}`)
	r := strings.NewReader(stream)
	b.ReportAllocs()
	for range b.N {
		r.Reset(stream)
		s := newSSEReader(r, 1<<20)
		for {
			if _, err := s.next(); err != nil {
				break
			}
		}
		s.release()
	}
}
