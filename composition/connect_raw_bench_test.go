package composition

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/adapters/mcpsession"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// connectEra is one protocol era of the HTTP connect benchmarks: the
// version the raw client is pinned to, the versions mcpward accepts, and
// whether the server is stateless (the go-sdk serves 2026-07-28 only so).
type connectEra struct {
	name      string
	version   string
	accept    []string
	stateless bool
}

var connectEras = []connectEra{
	{"legacy", "2025-11-25", mcpsession.LegacyVersions(), false},
	{"modern", "2026-07-28", mcpsession.ModernVersions(), true},
}

// echoHTTPServer is a go-sdk server of one echo tool on loopback
// Streamable HTTP, and its close.
func echoHTTPServer(b testing.TB, stateless bool) (string, func()) {
	b.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: stateless}))
	return ts.URL + "/mcp", ts.Close
}

// rawConnect is the raw go-sdk client's connect as bench-peers' go-sdk
// client makes it: a fresh http.Transport (url) or the command bin
// started (url ""), the handshake pinned to version, list changes asked
// for, every list the server declares read in full; it returns the
// session's close (which also drops the transport's idle connections).
func rawConnect(b testing.TB, url, bin, version string) func() {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench-gosdk", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) {},
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) {},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {},
	})
	var t mcp.Transport = &mcp.CommandTransport{Command: exec.Command(bin)}
	idle := func() {}
	if url != "" {
		tr := &http.Transport{}
		idle = tr.CloseIdleConnections
		t = &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: tr}, MaxRetries: -1}
	}
	cs, err := c.Connect(context.Background(), t, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		b.Fatalf("raw connect: %v", err)
	}
	// Everything the server declares is listed, as a host's discovery
	// lists it (the example server has prompts and resources too).
	ctx := context.Background()
	caps := cs.InitializeResult().Capabilities
	err = errors.Join(drainRaw(cs.Tools(ctx, nil)))
	if caps.Prompts != nil {
		err = errors.Join(err, drainRaw(cs.Prompts(ctx, nil)))
	}
	if caps.Resources != nil {
		err = errors.Join(err, drainRaw(cs.Resources(ctx, nil)), drainRaw(cs.ResourceTemplates(ctx, nil)))
	}
	if err != nil {
		b.Fatalf("raw list: %v", err)
	}
	return func() {
		_ = cs.Close()
		idle()
	}
}

// drainRaw reads every page of one of the SDK's list iterators.
func drainRaw[T any](seq iter.Seq2[T, error]) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

// hostConnect is Host.Connect of the one server srcs define (evaluation,
// activation and its audit record, dial, handshake, discovery, catalog);
// it returns the Fleet's close.
func hostConnect(b testing.TB, h *Host, srcs []definition.Source, accept []string) func() {
	f := h.Connect(context.Background(), srcs, &ConnectOptions{Session: &mcpsession.Options{AcceptVersions: accept}})
	if s := f.Servers(); len(s) != 1 || s[0].State != StateConnected {
		b.Fatalf("not connected: %+v", s)
	}
	return func() { _ = f.Close() }
}

// memoryHost is a Host on the in-memory stores (as bench-peers' mcpward
// client is), its stdio servers run in a temporary directory.
func memoryHost(b testing.TB) *Host {
	h, err := New(Ports{Approvals: portstest.NewApprovalStore(), Audit: portstest.NewAuditLog(),
		Trust: portstest.NewWorkspaceTrust(ports.WorkspaceFacts{Repository: "https://example.com/r.git", Generation: "g1"})},
		Config{Authority: NewRootAuthority(b.TempDir(), map[string]string{"LANG": "C"})})
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// connectTarget returns the server of a connect benchmark over transport
// ("http": echoHTTPServer; "stdio": the example server, a child per
// connect): its URL ("" for stdio), its command, its definition, and its
// close.
func connectTarget(b testing.TB, transport string, era connectEra) (url, bin string, srcs []definition.Source, done func()) {
	b.Helper()
	if transport == "stdio" {
		bin, err := exampleServer()
		if err != nil {
			b.Fatal(err)
		}
		q, _ := json.Marshal(bin)
		return "", bin, userSrc(`{"mcpServers": {"s": {"command": ` + string(q) + `}}}`), func() {}
	}
	url, done = echoHTTPServer(b, era.stateless)
	return url, "", userSrc(`{"mcpServers": {"s": {"type": "http", "url": "` + url + `"}}}`), done
}

// BenchmarkHostConnectHTTPVsRaw makes, in every op, the raw go-sdk client's
// connect (handshake and listing, on a fresh http.Transport) and a
// Host.Connect of the same loopback server (in-memory stores),
// interleaved (each first in every other op), in each protocol era; it reports the medians of the two
// connects (each closed after, outside the time, as bench-peers times
// them) and mcpward's excess over the raw client's in microseconds.
//
//	cd composition
//	go test -run '^$' -bench 'HostConnect(HTTP|Stdio)VsRaw' -benchtime 400x .
func BenchmarkHostConnectHTTPVsRaw(b *testing.B) { benchConnectVsRaw(b, "http") }

// BenchmarkHostConnectStdioVsRaw is BenchmarkHostConnectHTTPVsRaw over
// stdio: the example server (tools, prompts and resources) started as a
// child by each connect, its start in both figures alike.
//
//	go test -run '^$' -bench 'HostConnectStdioVsRaw' -benchtime 200x .
func BenchmarkHostConnectStdioVsRaw(b *testing.B) { benchConnectVsRaw(b, "stdio") }

func benchConnectVsRaw(b *testing.B, transport string) {
	for _, era := range connectEras {
		b.Run(era.name, func(b *testing.B) {
			url, bin, srcs, done := connectTarget(b, transport, era)
			defer done()
			h := memoryHost(b)
			for range 10 {
				rawConnect(b, url, bin, era.version)()
				hostConnect(b, h, srcs, era.accept)()
			}
			var raw, ward []time.Duration
			timeRaw := func() {
				t := time.Now()
				done := rawConnect(b, url, bin, era.version)
				raw = append(raw, time.Since(t))
				done()
			}
			timeWard := func() {
				t := time.Now()
				done := hostConnect(b, h, srcs, era.accept)
				ward = append(ward, time.Since(t))
				done()
			}
			for i := 0; b.Loop(); i++ {
				// Each goes first in every other op, so that what one's
				// close leaves running (the server's end of the session)
				// falls on both alike.
				if i%2 == 0 {
					timeRaw()
					timeWard()
				} else {
					timeWard()
					timeRaw()
				}
			}
			r, w := p50(raw), p50(ward)
			b.ReportMetric(float64(r.Nanoseconds()), "raw-p50-ns")
			b.ReportMetric(float64(w.Nanoseconds()), "mcpward-p50-ns")
			b.ReportMetric(float64((w - r).Microseconds()), "excess-us")
		})
	}
}

// BenchmarkHostConnectHTTPAlone is each of the two connects alone, close
// included, for profiles and this process's CPU per connect (the server
// is in the process too, alike for both).
//
//	go test -run '^$' -bench 'HostConnectHTTPAlone/mcpward/modern' -benchtime 1000x -cpuprofile cpu.out .
func BenchmarkHostConnectHTTPAlone(b *testing.B) {
	for _, who := range []string{"raw", "mcpward"} {
		for _, era := range connectEras {
			b.Run(who+"/"+era.name, func(b *testing.B) {
				url, _, srcs, done := connectTarget(b, "http", era)
				defer done()
				h := memoryHost(b)
				one := func() {
					if who == "raw" {
						rawConnect(b, url, "", era.version)()
					} else {
						hostConnect(b, h, srcs, era.accept)()
					}
				}
				for range 10 {
					one()
				}
				b.ReportAllocs()
				cpu := hostCPU(b)
				var ds []time.Duration
				for b.Loop() {
					t := time.Now()
					one()
					ds = append(ds, time.Since(t))
				}
				b.ReportMetric(float64(hostCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(p50(ds).Nanoseconds()), "p50-ns")
			})
		}
	}
}
