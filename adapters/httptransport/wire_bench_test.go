//go:build linux || darwin

package httptransport

import (
	"context"
	"net"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// wireListener counts every byte its connections read and write: the
// whole HTTP exchange, request and response headers included.
type wireListener struct {
	net.Listener
	in, out atomic.Int64
}

func (l *wireListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &wireConn{Conn: c, l: l}, nil
}

type wireConn struct {
	net.Conn
	l *wireListener
}

func (c *wireConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.l.in.Add(int64(n))
	return n, err
}

func (c *wireConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.l.out.Add(int64(n))
	return n, err
}

// BenchmarkHTTPCallWire is one tools/call of the echo tool over an
// established session (SSE and JSON answers), reporting the bytes on the
// wire per call as the server's socket sees them: req-B/op (request line,
// headers and body) and resp-B/op (status line, headers and body), for the
// raw go-sdk client and mcpward's transport on the same server.
//
//	cd adapters/httptransport
//	go test -run '^$' -bench HTTPCallWire -benchtime 2000x -count 1
func BenchmarkHTTPCallWire(b *testing.B) {
	for _, mode := range []struct {
		name string
		json bool
	}{{"sse", false}, {"json", true}} {
		b.Run(mode.name, func(b *testing.B) {
			srv := httptest.NewUnstartedServer(mcpHandler(newMCPServer(), &mcp.StreamableHTTPOptions{JSONResponse: mode.json}))
			wl := &wireListener{Listener: srv.Listener}
			srv.Listener = wl
			srv.Start()
			b.Cleanup(srv.Close)
			url := srv.URL + "/mcp"
			for _, side := range benchSides() {
				if side.name != "raw" && side.name != "mcpward" {
					continue
				}
				b.Run(side.name, func(b *testing.B) {
					tr := side.setup()(b, url)
					cs := benchConnect(b, tr)
					defer tr.CloseIdleConnections()
					defer cs.Close()
					params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"msg": "hello"}}
					in0, out0 := wl.in.Load(), wl.out.Load()
					b.ReportAllocs()
					b.ResetTimer()
					for range b.N {
						res, err := cs.CallTool(context.Background(), params)
						if err != nil || res.IsError {
							b.Fatal("echo failed")
						}
					}
					b.StopTimer()
					b.ReportMetric(float64(wl.in.Load()-in0)/float64(b.N), "req-B/op")
					b.ReportMetric(float64(wl.out.Load()-out0)/float64(b.N), "resp-B/op")
				})
			}
		})
	}
}
