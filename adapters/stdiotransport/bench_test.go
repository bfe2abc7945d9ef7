//go:build linux || darwin

package stdiotransport

import (
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// benchTransports makes, for each side, a fresh transport to the same
// fixture: mcpward's, and the go-sdk's own CommandTransport.
func benchTransports(b *testing.B) map[string]func() mcp.Transport {
	root := b.TempDir()
	l := New(portstest.GrantAllProcesses(ports.ProcessGrant{AllowedRoot: root, BaselineEnv: map[string]string{"PATH": "/usr/bin:/bin"}}), nil)
	return map[string]func() mcp.Transport{
		"mcpward": func() mcp.Transport {
			tr, err := l.Transport(context.Background(), ports.Target{ServerID: "fx", Kind: ports.TransportStdio, Command: fixtureBin})
			require.NoError(b, err)
			return tr
		},
		"raw": func() mcp.Transport {
			cmd := exec.Command(fixtureBin)
			cmd.Dir = root
			cmd.Env = []string{"PATH=/usr/bin:/bin"}
			return &mcp.CommandTransport{Command: cmd}
		},
	}
}

// clientCPU is the user+system CPU time of this process so far: the
// client side only (the fixture server is a child process, not counted).
func clientCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal("getrusage failed")
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCallEcho is one tools/call round trip over a live session.
// Besides ns/op (wall time, the child's turn included) it reports
// cpu-ns/op, this process's CPU time per call: the client side's cost.
func BenchmarkCallEcho(b *testing.B) {
	mk := benchTransports(b)
	for _, name := range []string{"mcpward", "raw"} {
		b.Run(name, func(b *testing.B) {
			cs := connect(b, mk[name]())
			defer cs.Close()
			ctx := context.Background()
			params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
			b.ReportAllocs()
			cpu := clientCPU(b)
			for b.Loop() {
				res, err := cs.CallTool(ctx, params)
				if err != nil || res.IsError {
					b.Fatal("echo failed")
				}
			}
			b.ReportMetric(float64(clientCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkConnectClose is admit (twice, for mcpward), spawn, initialize,
// and a graceful close of a cooperative child.
func BenchmarkConnectClose(b *testing.B) {
	mk := benchTransports(b)
	for _, name := range []string{"mcpward", "raw"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				cs := connect(b, mk[name]())
				if err := cs.Close(); err != nil {
					b.Fatal("close failed")
				}
			}
		})
	}
}
