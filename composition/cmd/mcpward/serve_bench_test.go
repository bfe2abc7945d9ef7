package main

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
)

// benchCalls calls echo b.N times on cs and reports the median call
// time as p50-ns (next to ns/op, the mean).
func benchCalls(b *testing.B, cs *mcp.ClientSession, tool string) {
	b.Helper()
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "benchmark"}}
	for range 20 { // warm up
		_, err := cs.CallTool(ctx, params)
		require.NoError(b, err)
	}
	d := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		r, err := cs.CallTool(ctx, params)
		d = append(d, time.Since(start))
		if err != nil || r.IsError {
			b.Fatalf("call failed: %v", err)
		}
	}
	b.StopTimer()
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds()), "p50-ns")
}

// BenchmarkServeStdioCall: one tools/call of the example server's echo
// through "mcpward serve ex" over stdio (client → mcpward → server),
// interleaved call by call with the same call made directly to a second
// example server (so that the machine's load moves both alike). p50-ns is
// the median through serve, direct-p50-ns the direct one's, serve/direct
// their ratio. BenchmarkDirectStdioCall is the direct call alone.
func BenchmarkServeStdioCall(b *testing.B) {
	bin, err := exampleServer()
	require.NoError(b, err)
	w := newWorld(b, nil)
	w.write(b, "config/mcpward/mcp.json", `{"mcpServers": {"ex": {"command": `+jsonString(bin)+`}}}`)
	cmd := exec.Command(binary, "serve", "ex")
	cmd.Dir, cmd.Env = w.ws, w.env
	cmd.Stderr = &iostreams.Buffer{}
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(b, err)
	defer cs.Close()
	require.Eventually(b, func() bool {
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
		return err == nil && !r.IsError
	}, 30*time.Second, 20*time.Millisecond)
	direct, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command(bin)}, nil)
	require.NoError(b, err)
	defer direct.Close()
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "benchmark"}}
	call := func(s *mcp.ClientSession) time.Duration {
		start := time.Now()
		r, err := s.CallTool(ctx, params)
		d := time.Since(start)
		if err != nil || r.IsError {
			b.Fatalf("call failed: %v", err)
		}
		return d
	}
	for range 20 { // warm up
		call(cs)
		call(direct)
	}
	ds := make([]time.Duration, 0, b.N)
	dd := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		ds = append(ds, call(cs))
		dd = append(dd, call(direct))
	}
	b.StopTimer()
	slices.Sort(ds)
	slices.Sort(dd)
	b.ReportMetric(float64(ds[len(ds)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(dd[len(dd)/2].Nanoseconds()), "direct-p50-ns")
	b.ReportMetric(float64(ds[len(ds)/2])/float64(dd[len(dd)/2]), "serve/direct")
}

// BenchmarkDirectStdioCall: the same call with the go-sdk client speaking
// to the example server directly.
func BenchmarkDirectStdioCall(b *testing.B) {
	bin, err := exampleServer()
	require.NoError(b, err)
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command(bin)}, nil)
	require.NoError(b, err)
	defer cs.Close()
	benchCalls(b, cs, "echo")
}
