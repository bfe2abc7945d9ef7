//go:build linux || darwin

package stdiotransport

import (
	"context"
	"os/exec"
	"slices"
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

// BenchmarkSpawnVsRaw times, in turns within each op, the launch alone:
// mcpward's Launcher.Transport and Transport.Connect (admission, twice;
// pipes, process group, the reaper and the stderr drain) and the go-sdk's
// CommandTransport.Connect of the same fixture, each up to the return of
// the connection (the child started, nothing exchanged); each connection
// is closed outside the time. It reports each side's p50 in µs and the
// difference of the medians.
//
//	cd adapters/stdiotransport
//	go test -run '^$' -bench SpawnVsRaw -benchtime 400x .
func BenchmarkSpawnVsRaw(b *testing.B) {
	mk := benchTransports(b)
	ctx := context.Background()
	var ours, raw []time.Duration
	spawn := func(name string) (time.Duration, mcp.Connection) {
		start := time.Now()
		c, err := mk[name]().Connect(ctx)
		d := time.Since(start)
		if err != nil {
			b.Fatal("connect failed")
		}
		return d, c
	}
	i := 0
	for b.Loop() {
		order := []string{"mcpward", "raw"}
		if i%2 == 1 {
			order = []string{"raw", "mcpward"}
		}
		i++
		for _, name := range order {
			d, c := spawn(name)
			if name == "raw" {
				raw = append(raw, d)
			} else {
				ours = append(ours, d)
			}
			_ = c.Close()
		}
	}
	mo, mr := median(ours), median(raw)
	b.ReportMetric(float64(mo.Microseconds()), "mcpward-p50-µs")
	b.ReportMetric(float64(mr.Microseconds()), "raw-p50-µs")
	b.ReportMetric(float64((mo - mr).Microseconds()), "excess-µs")
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
