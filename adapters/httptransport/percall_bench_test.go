package httptransport

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/core/egress"
)

// BenchmarkHTTPCallPerCall is one tools/call of the echo tool answered as an
// SSE stream, made the way mcpward's host path makes it: each call under a
// context of its own that ends when the call returns (the supervisor's call
// bounds), and, on the mcpward side, with the inbound filter set (as
// mcpsession sets it). raw is the go-sdk's client on a plain http.Client
// under the same per-call contexts. It reports B/op and allocs/op (the
// in-process server's share included, the same on both sides) and the
// process CPU per call (cpu-ns/op).
func BenchmarkHTTPCallPerCall(b *testing.B) {
	url := benchServer(b, false)
	sides := []struct {
		name string
		tr   func(b *testing.B) closableTransport
	}{
		{"raw", func(*testing.B) closableTransport {
			return rawTr{&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: &http.Transport{}}}}
		}},
		{"mcpward", func(b *testing.B) closableTransport {
			tr, err := New(egress.Default(), safeOptions()).Transport(context.Background(), httpTarget("bench", url, nil), nil)
			if err != nil {
				b.Fatal("transport refused")
			}
			tr.SetInboundFilter(func(string, bool) bool { return true })
			return tr
		}},
	}
	for _, side := range sides {
		b.Run(side.name, func(b *testing.B) {
			tr := side.tr(b)
			cs := benchConnect(b, tr)
			defer tr.CloseIdleConnections()
			defer cs.Close()
			params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"msg": "hello"}}
			b.ReportAllocs()
			cpu0 := processCPU(b)
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
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
