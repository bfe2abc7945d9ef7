package httptransport

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/core/egress"
)

// BenchmarkConnEra compares, per protocol era, our connection with the
// go-sdk's StreamableClientTransport on the same in-process go-sdk server
// (legacy: protocol sessions, pinned 2025-11-25; modern: stateless,
// 2026-07-28), in the same run: one tools/call of echo per op, the two
// sides interleaved (paired: p50, CPU per call and their ratios), then
// allocations and the bytes on the wire per call of each side alone
// (raw/ours: B/op, allocs/op, req-B/op, resp-B/op).
//
//	cd adapters/httptransport
//	go test -run '^$' -bench ConnEra -benchtime 2000x -count 1
func BenchmarkConnEra(b *testing.B) {
	for _, modern := range []bool{false, true} {
		name := map[bool]string{false: "legacy", true: "modern"}[modern]
		b.Run(name, func(b *testing.B) {
			srv := httptest.NewUnstartedServer(mcpHandler(newMCPServer(), &mcp.StreamableHTTPOptions{Stateless: modern}))
			wl := &wireListener{Listener: srv.Listener}
			srv.Listener = wl
			srv.Start()
			b.Cleanup(srv.Close)
			url := srv.URL + "/mcp"
			var opts *mcp.ClientSessionOptions
			if !modern {
				opts = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
			}
			dial := func(b *testing.B, ours bool) (*mcp.ClientSession, func()) {
				var tr closableTransport
				if ours {
					t, err := New(egress.Default(), safeOptions()).Transport(context.Background(), httpTarget("bench", url, nil), nil)
					if err != nil {
						b.Fatal("transport refused")
					}
					t.SetInboundFilter(func(string, bool) bool { return true })
					tr = t
				} else {
					tr = rawTr{&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: &http.Transport{}}, MaxRetries: -1}}
				}
				cs, err := benchClient.Connect(context.Background(), tr, opts)
				if err != nil {
					b.Fatal("connect failed")
				}
				return cs, func() { cs.Close(); tr.CloseIdleConnections() }
			}
			params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"msg": "hello"}}
			call := func(b *testing.B, cs *mcp.ClientSession) time.Duration {
				t0 := time.Now()
				res, err := cs.CallTool(context.Background(), params)
				d := time.Since(t0)
				if err != nil || res.IsError {
					b.Fatal("echo failed")
				}
				return d
			}
			b.Run("raw-vs-ours", func(b *testing.B) {
				rawCS, rawDone := dial(b, false)
				defer rawDone()
				ourCS, ourDone := dial(b, true)
				defer ourDone()
				paired(b, 16, func() time.Duration { return call(b, rawCS) }, func() time.Duration { return call(b, ourCS) })
			})
			for _, ours := range []bool{false, true} {
				b.Run(map[bool]string{false: "raw", true: "ours"}[ours], func(b *testing.B) {
					cs, done := dial(b, ours)
					defer done()
					in0, out0 := wl.in.Load(), wl.out.Load()
					b.ReportAllocs()
					b.ResetTimer()
					for range b.N {
						call(b, cs)
					}
					b.StopTimer()
					b.ReportMetric(float64(wl.in.Load()-in0)/float64(b.N), "req-B/op")
					b.ReportMetric(float64(wl.out.Load()-out0)/float64(b.N), "resp-B/op")
				})
			}
		})
	}
}
