package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// binary is the server built once for the tests that run it as a child.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "example-server-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "server")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the example server:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// pinned is the protocol version mcpward pins; "" is the SDK's default
// (2026-07-28 with a fallback).
var versions = []struct{ name, version string }{
	{"pinned 2025-11-25", "2025-11-25"},
	{"sdk default", ""},
}

// connect connects a plain go-sdk client over t.
func connect(t *testing.T, tr mcp.Transport, version string) *mcp.ClientSession {
	t.Helper()
	return connectWith(t, tr, version, nil)
}

// connectWith connects a go-sdk client with opts over t.
func connectWith(t *testing.T, tr mcp.Transport, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "example-test", Version: "0"}, opts)
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// stdioChild starts the binary over stdio.
func stdioChild(t *testing.T, version string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(binary)
	cmd.Env = []string{} // the server needs no environment
	return connect(t, &mcp.CommandTransport{Command: cmd}, version)
}

// httpChild starts the binary with -http on a free loopback port and returns
// its URL and process. The process is ended (SIGTERM, then waited for) at
// cleanup, and must exit 0.
func httpChild(t *testing.T, addr string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(binary, "-http", addr)
	cmd.Env = []string{}
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, out)
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("no listening line within 10s")
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		err := cmd.Wait()
		assert.NoError(t, err, "SIGTERM ends the HTTP server with status 0; stderr: %s", stderr.String())
	})
	url, ok := strings.CutPrefix(line, "listening ")
	require.True(t, ok, "first stdout line: %q", line)
	require.True(t, strings.HasPrefix(url, "http://127.0.0.1:") || strings.HasPrefix(url, "http://[::1]:"), url)
	require.True(t, strings.HasSuffix(url, "/mcp"), url)
	return url, cmd
}

func TestOverStdio(t *testing.T) {
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			suite(t, func(t *testing.T) *mcp.ClientSession { return stdioChild(t, v.version) })
		})
	}
}

func TestOverHTTP(t *testing.T) {
	url, _ := httpChild(t, "127.0.0.1:0")
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			suite(t, func(t *testing.T) *mcp.ClientSession {
				return connect(t, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, v.version)
			})
		})
	}
}

func TestOverHTTPIPv6AndLocalhost(t *testing.T) {
	for _, addr := range []string{"[::1]:0", "localhost:0"} {
		t.Run(addr, func(t *testing.T) {
			if addr == "[::1]:0" && !ipv6Loopback() {
				t.Skip("no IPv6 loopback here")
			}
			url, _ := httpChild(t, addr)
			cs := connect(t, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, "2025-11-25")
			res := call(t, cs, "echo", map[string]any{"text": "hi"})
			assert.Equal(t, "hi", text(t, res))
		})
	}
}

func ipv6Loopback() bool {
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp6", "[::1]:0")
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// suite runs every behaviour over sessions made by open.
func suite(t *testing.T, open func(t *testing.T) *mcp.ClientSession) {
	cs := open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	t.Run("identity", func(t *testing.T) {
		info := cs.InitializeResult()
		require.NotNil(t, info)
		require.NotNil(t, info.ServerInfo)
		assert.Equal(t, Name, info.ServerInfo.Name)
		assert.Equal(t, Version, info.ServerInfo.Version)
		assert.NotNil(t, info.Capabilities.Tools)
		assert.NotNil(t, info.Capabilities.Prompts)
		assert.NotNil(t, info.Capabilities.Resources)
	})

	t.Run("tools and their schemas", func(t *testing.T) {
		lt, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		schemas := map[string]map[string]any{}
		for _, tool := range lt.Tools {
			b, err := json.Marshal(tool.InputSchema)
			require.NoError(t, err)
			var m map[string]any
			require.NoError(t, json.Unmarshal(b, &m))
			schemas[tool.Name] = m
			assert.NotEmpty(t, tool.Description, tool.Name)
		}
		require.Len(t, schemas, 4)
		want := map[string][]any{"echo": {"text"}, "add": {"a", "b"}, "word_count": {"text"}, "slow": {"ms"}}
		for name, req := range want {
			s := schemas[name]
			require.NotNil(t, s, name)
			assert.Equal(t, "object", s["type"], name)
			assert.ElementsMatch(t, req, s["required"], name)
			assert.Equal(t, false, s["additionalProperties"], name)
		}
		ms := schemas["slow"]["properties"].(map[string]any)["ms"].(map[string]any)
		assert.Equal(t, "integer", ms["type"])
		assert.EqualValues(t, 0, ms["minimum"])
		assert.EqualValues(t, MaxSlowMillis, ms["maximum"])
		add := schemas["add"]["properties"].(map[string]any)
		assert.Equal(t, "number", add["a"].(map[string]any)["type"])
		assert.Equal(t, "number", add["b"].(map[string]any)["type"])
	})

	t.Run("echo", func(t *testing.T) {
		for _, s := range []string{"hello", "", "ünïcödé \n\t line", strings.Repeat("x", 100_000)} {
			res := call(t, cs, "echo", map[string]any{"text": s})
			assert.False(t, res.IsError)
			assert.Equal(t, s, text(t, res))
			assert.Nil(t, res.StructuredContent)
		}
	})

	t.Run("add", func(t *testing.T) {
		tests := []struct {
			a, b float64
			text string
		}{
			{2, 3, "5"},
			{-1.5, 0.25, "-1.25"},
			{1e300, 1e300, "2e+300"},
			{0, 0, "0"},
		}
		for _, tt := range tests {
			res := call(t, cs, "add", map[string]any{"a": tt.a, "b": tt.b})
			require.False(t, res.IsError)
			assert.Equal(t, tt.text, text(t, res))
			sc := structured(t, res)
			assert.Equal(t, tt.a+tt.b, sc["sum"])
		}
	})

	t.Run("word_count", func(t *testing.T) {
		tests := map[string]float64{"": 0, "one": 1, "  two   words \n": 2, "a\tb\nc d": 4, "ünï cödé": 2}
		for in, n := range tests {
			res := call(t, cs, "word_count", map[string]any{"text": in})
			require.False(t, res.IsError)
			assert.Equal(t, fmt.Sprint(n), text(t, res), "%q", in)
			assert.Equal(t, n, structured(t, res)["words"], "%q", in)
		}
	})

	t.Run("slow sleeps", func(t *testing.T) {
		start := time.Now()
		res := call(t, cs, "slow", map[string]any{"ms": 120})
		assert.False(t, res.IsError)
		assert.Equal(t, "slept 120 ms", text(t, res))
		assert.GreaterOrEqual(t, time.Since(start), 120*time.Millisecond)
	})

	t.Run("bad arguments", func(t *testing.T) {
		tests := []struct {
			name string
			tool string
			args any
		}{
			{"echo without text", "echo", map[string]any{}},
			{"echo with a number", "echo", map[string]any{"text": 3}},
			{"echo with an extra property", "echo", map[string]any{"text": "x", "more": 1}},
			{"add with a string", "add", map[string]any{"a": "1", "b": 2}},
			{"add missing b", "add", map[string]any{"a": 1}},
			{"word_count with null", "word_count", map[string]any{"text": nil}},
			{"slow above the maximum", "slow", map[string]any{"ms": MaxSlowMillis + 1}},
			{"slow negative", "slow", map[string]any{"ms": -1}},
			{"slow not an integer", "slow", map[string]any{"ms": 1.5}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				start := time.Now()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
				require.NoError(t, err, "a schema violation is a tool error, not a protocol error")
				assert.True(t, res.IsError)
				assert.Less(t, time.Since(start), 5*time.Second, "refused before running")
			})
		}
	})

	t.Run("unknown tool", func(t *testing.T) {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope", Arguments: map[string]any{}})
		assert.Error(t, err)
	})

	t.Run("slow is cancellable", func(t *testing.T) {
		cctx, ccancel := context.WithCancel(ctx)
		go func() { time.Sleep(100 * time.Millisecond); ccancel() }()
		start := time.Now()
		_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": MaxSlowMillis}})
		require.Error(t, err)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Less(t, time.Since(start), 3*time.Second)
		// The session is still usable afterwards.
		res := call(t, cs, "echo", map[string]any{"text": "after"})
		assert.Equal(t, "after", text(t, res))
	})

	t.Run("prompt", func(t *testing.T) {
		lp, err := cs.ListPrompts(ctx, nil)
		require.NoError(t, err)
		require.Len(t, lp.Prompts, 1)
		p := lp.Prompts[0]
		assert.Equal(t, "review", p.Name)
		require.Len(t, p.Arguments, 1)
		assert.Equal(t, "text", p.Arguments[0].Name)
		assert.True(t, p.Arguments[0].Required)

		gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"text": "my essay"}})
		require.NoError(t, err)
		require.Len(t, gp.Messages, 1)
		assert.Equal(t, mcp.Role("user"), gp.Messages[0].Role)
		tc, ok := gp.Messages[0].Content.(*mcp.TextContent)
		require.True(t, ok)
		assert.Contains(t, tc.Text, "my essay")

		_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review"})
		assert.Error(t, err, "the required argument is missing")
	})

	t.Run("resource", func(t *testing.T) {
		lr, err := cs.ListResources(ctx, nil)
		require.NoError(t, err)
		require.Len(t, lr.Resources, 1)
		assert.Equal(t, ReadmeURI, lr.Resources[0].URI)
		assert.Equal(t, "text/plain", lr.Resources[0].MIMEType)

		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: ReadmeURI})
		require.NoError(t, err)
		require.Len(t, rr.Contents, 1)
		assert.Equal(t, readme, rr.Contents[0].Text)

		_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "example://missing"})
		assert.Error(t, err)
	})
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	return res
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	require.Len(t, res.Content, 1)
	tc, ok := res.Content[0].(*mcp.TextContent)
	require.True(t, ok, "text content")
	return tc.Text
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// TestSlowStopsWhenCancelled proves, from inside the server, that a
// cancelled slow call stops sleeping (rather than only the client giving up),
// over the in-memory transport and over Streamable HTTP, for both protocol
// versions. The call is cancelled once its progress notification (progress
// 0 of ms, sent because the call carries a progress token) says it runs.
func TestSlowStopsWhenCancelled(t *testing.T) {
	transports := []struct {
		name string
		open func(t *testing.T, srv *hooks) mcp.Transport
	}{
		{"in memory", func(t *testing.T, h *hooks) mcp.Transport {
			ct, st := mcp.NewInMemoryTransports()
			ss, err := newServer(h).Connect(context.Background(), st, nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = ss.Close() })
			return ct
		}},
		{"streamable http", func(t *testing.T, h *hooks) mcp.Transport {
			hs := httptest.NewServer(newHTTPHandler(newServer(h)))
			t.Cleanup(hs.Close)
			return &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp", MaxRetries: -1}
		}},
	}
	for _, tr := range transports {
		for _, v := range versions {
			t.Run(tr.name+"/"+v.name, func(t *testing.T) {
				ended := make(chan error, 1)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				started := make(chan *mcp.ProgressNotificationParams, 1)
				cs := connectWith(t, tr.open(t, &hooks{slowEnded: func(err error) { ended <- err }}), v.version, &mcp.ClientOptions{
					ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
						select {
						case started <- req.Params:
						default:
						}
						cancel()
					}})
				params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": MaxSlowMillis}}
				params.SetProgressToken("slow-1")
				_, err := cs.CallTool(ctx, params)
				require.Error(t, err)
				select {
				case p := <-started:
					assert.Equal(t, "slow-1", p.ProgressToken)
					assert.Zero(t, p.Progress)
					assert.Equal(t, float64(MaxSlowMillis), p.Total)
				default:
					t.Fatal("the call ended without its start being reported")
				}
				select {
				case err := <-ended:
					assert.ErrorIs(t, err, context.Canceled, "the handler saw the cancellation")
				case <-time.After(5 * time.Second):
					t.Fatal("the slow handler went on sleeping after its call was cancelled")
				}
			})
		}
	}
}

func TestHTTPRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0", "10.1.2.3:0", "192.168.0.1:80", "example.com:80", "127.0.0.1", "127.0.0.1:99999"} {
		t.Run(addr, func(t *testing.T) {
			cmd := exec.Command(binary, "-http", addr)
			cmd.Env = []string{}
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, exitUsage, ee.ExitCode())
			assert.Empty(t, stdout.String(), "nothing listened")
			assert.Contains(t, stderr.String(), "-http")
		})
	}
}

func TestUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"unknown flag", []string{"-nope"}, exitUsage},
		{"extra argument", []string{"extra"}, exitUsage},
		{"help", []string{"-h"}, exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			code := run(context.Background(), tt.args, strings.NewReader(""), &stdout, &stderr)
			assert.Equal(t, tt.code, code)
			assert.Empty(t, stdout.String())
			assert.Contains(t, stderr.String(), "usage: server")
		})
	}
}

func TestStdioEndsWhenStdinCloses(t *testing.T) {
	cmd := exec.Command(binary)
	cmd.Env = []string{}
	cmd.Stdin = strings.NewReader("")
	done := make(chan error, 1)
	require.NoError(t, cmd.Start())
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("still running after stdin closed")
	}
}

func TestStdioEndsOnSIGTERM(t *testing.T) {
	cmd := exec.Command(binary)
	cmd.Env = []string{}
	stdin, err := cmd.StdinPipe() // kept open: only the signal can end it
	require.NoError(t, err)
	defer stdin.Close()
	require.NoError(t, cmd.Start())
	time.Sleep(200 * time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("still running after SIGTERM")
	}
}

func TestLoopbackAddr(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" means refused
	}{
		{"127.0.0.1:0", "127.0.0.1:0"},
		{"127.0.0.1:8080", "127.0.0.1:8080"},
		{"127.9.8.7:65535", "127.9.8.7:65535"},
		{"[::1]:7", "[::1]:7"},
		{"localhost:1", "127.0.0.1:1"},
		{"LOCALHOST:1", "127.0.0.1:1"},
		{"0.0.0.0:0", ""},
		{"[::]:0", ""},
		{":0", ""},
		{"10.0.0.1:80", ""},
		{"169.254.169.254:80", ""},
		{"[::ffff:127.0.0.1]:80", ""},
		{"[fe80::1%lo]:80", ""},
		{"[::1%lo]:80", ""},
		{"x.localhost:80", ""},
		{"localhost.:80", ""},
		{"example.com:80", ""},
		{"2130706433:80", ""},
		{"127.1:80", ""},
		{"127.0.0.1", ""},
		{"127.0.0.1:", ""},
		{"127.0.0.1:65536", ""},
		{"127.0.0.1:-1", ""},
		{"127.0.0.1:+1", ""},
		{"127.0.0.1:08", ""},
		{"127.0.0.1:0x10", ""},
		{"127.0.0.1:http", ""},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := loopbackAddr(tt.in)
			if tt.want == "" {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.String())
		})
	}
}

// FuzzLoopbackAddr: whatever is accepted is a loopback IP, without a zone,
// and the port is what the input spelled.
func FuzzLoopbackAddr(f *testing.F) {
	for _, s := range []string{"127.0.0.1:0", "[::1]:80", "localhost:1", "0.0.0.0:0", "[::ffff:127.0.0.1]:1", "127.0.0.1:08"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ap, err := loopbackAddr(s)
		if err != nil {
			return
		}
		ip := ap.Addr()
		if !ip.IsLoopback() || ip.Zone() != "" || ip.Is4In6() {
			t.Fatalf("accepted a non-loopback address %v", ap)
		}
		if !strings.HasSuffix(s, fmt.Sprintf(":%d", ap.Port())) {
			t.Fatalf("port changed: %q gave %v", s, ap)
		}
		_ = netip.MustParseAddrPort(ap.String())
	})
}
