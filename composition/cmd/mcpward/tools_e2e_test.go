package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
)

// exampleServer builds ../../../examples/server once, next to the CLI
// binary (TestMain removes that directory).
var exampleServer = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(filepath.Dir(binary), "example-server")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join("..", "..", "..", "examples", "server")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the example server: %v\n%s", err, out)
	}
	return bin, nil
})

func exampleBinary(t *testing.T) string {
	t.Helper()
	bin, err := exampleServer()
	require.NoError(t, err)
	return bin
}

// startHTTPExample runs the example server over HTTP on loopback until
// the test ends and returns its URL.
func startHTTPExample(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(exampleBinary(t), "-http", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case line := <-lines:
		url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
		require.True(t, ok, "no listening line")
		return url
	case <-time.After(10 * time.Second):
		t.Fatal("no listening line within 10s")
		return ""
	}
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestToolsAndCallStdio runs tools and call against the example server as
// a stdio child of the built CLI (headless profile), comparing with golden
// transcripts.
func TestToolsAndCallStdio(t *testing.T) {
	bin := exampleBinary(t)
	w := newWorld(t, map[string]string{
		"ws/.mcp.json": `{"mcpServers": {
  "example": {"command": ` + jsonString(bin) + `, "env": {"EXAMPLE_MODE": "demo"}},
  "other":   {"command": ` + jsonString(bin) + `},
  "legacy":  {"type": "sse", "url": "http://127.0.0.1:1/sse"}
}}`,
		"ws/.git/config": gitConfig,
	})
	require.Equal(t, 0, w.run(t, "approve", "example").code)
	steps := []struct {
		name string
		args []string
		code int
	}{
		{name: "tools", args: []string{"tools"}},
		{name: "tools_json", args: []string{"tools", "--json"}},
		{name: "tools_named_denied", args: []string{"tools", "example", "other"}, code: 1},
		{name: "tools_unknown", args: []string{"tools", "ghost"}, code: 1},
		{name: "call_echo", args: []string{"call", "example", "echo", "--args", `{"text":"hello from mcpward"}`}},
		{name: "call_add_json", args: []string{"--json", "call", "example", "add", "--args", `{"a":2,"b":3.5}`}},
		{name: "call_invalid_args", args: []string{"call", "example", "echo", "--args", `{"text":42}`}, code: 1},
		{name: "call_invalid_args_json", args: []string{"call", "example", "echo", "--args", `not json`, "--json"}, code: 1},
		{name: "call_unknown_tool", args: []string{"call", "example", "nope"}, code: 1},
		{name: "call_host_name", args: []string{"call", "mcp__example__echo", "--args", `{"text":"by host-facing name"}`}},
		{name: "call_slash_name", args: []string{"call", "example/echo", "--args", `{"text":"by server/tool"}`}},
		{name: "call_did_you_mean", args: []string{"call", "example", "ecoh"}, code: 1},
		{name: "call_host_name_did_you_mean", args: []string{"call", "mcp__example__word_cout"}, code: 1},
		{name: "usage_call_one_plain_name", args: []string{"call", "echo"}, code: 2},
		{name: "call_denied", args: []string{"call", "other", "echo"}, code: 1},
		{name: "call_refused", args: []string{"call", "legacy", "echo"}, code: 1},
		{name: "call_unknown_server", args: []string{"call", "ghost", "echo"}, code: 1},
		{name: "usage_call_missing_tool", args: []string{"call", "example"}, code: 2},
		{name: "usage_args_elsewhere", args: []string{"list", "--args", "{}"}, code: 2},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			r := w.run(t, s.args...)
			assert.Equal(t, s.code, r.code, "exit code\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
			golden(t, "tools_"+s.name, strings.ReplaceAll(w.transcript(s.args, r), bin, "$EXAMPLE"))
		})
	}
	t.Run("json shape", func(t *testing.T) {
		r := w.run(t, "tools", "--json")
		var got []map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
		require.Len(t, got, 3)
		for _, s := range got {
			for _, k := range []string{"name", "state", "class", "reason", "partial", "stale", "tools", "rejected"} {
				assert.Contains(t, s, k)
			}
		}
		ex := got[0]
		assert.Equal(t, "example", ex["name"])
		assert.Equal(t, "connected", ex["state"])
		tools := ex["tools"].([]any)
		require.NotEmpty(t, tools)
		first := tools[0].(map[string]any)
		for _, k := range []string{"name", "server_tool", "description", "input_schema"} {
			assert.Contains(t, first, k)
		}
		assert.Equal(t, "refused", got[1]["state"])
		assert.Equal(t, "denied", got[2]["state"])
	})
	assert.Empty(t, children(bin), "no example server is left running")
}

// TestToolsFiltered: a definition's includeTools/excludeTools and the
// managed policy's deniedTools keep tools out of the host's tool set; tools
// lists them as rejected with the reason, and call says why it cannot call
// one.
func TestToolsFiltered(t *testing.T) {
	bin := exampleBinary(t)
	w := newWorld(t, map[string]string{
		"managed.json": `{"deniedTools": ["example/add"]}`,
		"config/mcpward/mcp.json": `{"mcpServers": {
  "example": {"command": ` + jsonString(bin) + `, "excludeTools": ["slow"]}
}}`,
	})
	base := []string{"--managed", "$ROOT/managed.json"}
	for _, s := range []struct {
		name string
		args []string
		code int
	}{
		{name: "tools", args: []string{"tools"}},
		{name: "call_filtered", args: []string{"call", "example", "slow"}, code: 1},
		{name: "call_policy_denied", args: []string{"call", "example/add"}, code: 1},
		{name: "call_kept", args: []string{"call", "example", "echo", "--args", `{"text":"kept"}`}},
	} {
		t.Run(s.name, func(t *testing.T) {
			args := append(append([]string{}, base...), s.args...)
			r := w.run(t, args...)
			assert.Equal(t, s.code, r.code, "exit code\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
			golden(t, "filtered_"+s.name, strings.ReplaceAll(w.transcript(args, r), bin, "$EXAMPLE"))
		})
	}
	assert.Empty(t, children(bin), "no example server is left running")
}

// children lists the live processes running program (none may be left
// after a CLI run).
func children(program string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, p := range procs {
		if exe, err := os.Readlink(p); err == nil && exe == program {
			out = append(out, p)
		}
	}
	return out
}

// TestToolsAndCallHTTP runs tools and call against the example server over
// Streamable HTTP on loopback.
func TestToolsAndCallHTTP(t *testing.T) {
	url := startHTTPExample(t)
	w := newWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {"remote": {"type": "http", "url": ` + jsonString(url) + `, "headers": {"X-Api-Key": "${REMOTE_KEY}"}}}}`,
	}, "REMOTE_KEY=cnry-remote-key-1")
	r := w.run(t, "tools")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "remote: connected (4 tools)")
	assert.Contains(t, r.stdout, "remote: connected (protocol 2025-11-25, legacy era)\n", "the example server over HTTP with protocol sessions speaks the legacy era")
	assert.Contains(t, r.stdout, "mcp__remote__echo")

	r = w.run(t, "tools", "remote", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var got []struct {
		Name, State string
		Tools       []struct {
			Name       string `json:"name"`
			ServerTool string `json:"server_tool"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.Len(t, got, 1)
	assert.Equal(t, "connected", got[0].State)
	require.NotEmpty(t, got[0].Tools)

	r = w.run(t, "call", "remote", "echo", "--args", `{"text":"over http"}`)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "over http\n", r.stdout)

	r = w.run(t, "call", "remote", "word_count", "--args", `{"text":"one two three"}`, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var c view.Call
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &c))
	assert.Equal(t, view.Call{Server: "remote", Tool: "word_count", Content: c.Content, StructuredContent: c.StructuredContent}, c)
	assert.Contains(t, string(c.Content), `"3"`)
	assert.JSONEq(t, `{"words":3}`, string(c.StructuredContent), "checked against the tool's output schema")

	r = w.run(t, "call", "remote", "add", "--args", `{"a":"x","b":1}`)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "invalid_arguments")
	for _, out := range []string{r.stdout, r.stderr} {
		assert.NotContains(t, out, canary)
	}
}

// TestDemoWithExampleServer runs "mcpward demo --server PATH": the demo
// approves the example server, lists its tools and calls them.
func TestDemoWithExampleServer(t *testing.T) {
	bin := exampleBinary(t)
	w := newWorld(t, nil)
	r := w.run(t, "demo", "--server", bin)
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	for _, want := range []string{
		"$ mcpward approve example\napproved example",
		"example: connected (4 tools)",
		"mcp__example__echo",
		"$ mcpward call example echo --args '{\"text\":\"hello from mcpward\"}'\nhello from mcpward\n",
		"\"text\": \"5\"",
	} {
		assert.Contains(t, r.stdout, want)
	}
	left, err := os.ReadDir(filepath.Join(w.root, "tmp"))
	require.NoError(t, err)
	assert.Empty(t, left, "the demo removes its directory")
	assert.Empty(t, children(bin), "no example server is left running")

	r = w.run(t, "demo", "--server", filepath.Join(w.root, "nope"))
	assert.Equal(t, 2, r.code)
}

// TestToolsCallCanary: secrets planted in a stdio server's env and an HTTP
// server's headers, through variables and literals, never appear in the
// output of tools and call, --json included.
func TestToolsCallCanary(t *testing.T) {
	bin := exampleBinary(t)
	url := startHTTPExample(t)
	w := newWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {
  "ex": {"command": ` + jsonString(bin) + `, "env": {"API_KEY": "cnry-env-literal-1", "T": "${EX_TOKEN}"}},
  "web": {"type": "http", "url": ` + jsonString(url+"?key=cnry-query-2") + `, "headers": {"Authorization": "Bearer ${WEB_TOKEN}", "X-K": "cnry-header-3"}},
  "gone": {"command": "/nonexistent/${EX_TOKEN}/server"}
}}`,
	}, "EX_TOKEN=cnry-var-4", "WEB_TOKEN=cnry-var-5")
	var all strings.Builder
	for _, args := range [][]string{
		{"tools"}, {"tools", "--json"}, {"tools", "ex", "web", "gone"},
		{"call", "ex", "echo", "--args", `{"text":"plain"}`}, {"call", "web", "echo", "--args", `{"text":"plain"}`, "--json"},
		{"call", "gone", "echo"}, {"call", "gone", "echo", "--json"}, {"call", "ex", "echo", "--args", `{"text":5}`, "--json"},
	} {
		r := w.run(t, args...)
		all.WriteString(r.stdout + r.stderr)
	}
	out := all.String()
	assert.Contains(t, out, "mcp__ex__echo", "the runs did connect")
	assert.NotContains(t, out, canary)
}

// The third-party peer, @modelcontextprotocol/server-everything, installed
// by "cd peers && npm ci" at the repository root. Without it (or node)
// the tests below skip, unless MCPWARD_REQUIRE_PEERS=1, when they fail.
const everythingEntry = "../../../peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

// everythingCommand returns node and the absolute entry point of the peer.
func everythingCommand(t *testing.T) (node, entry string) {
	t.Helper()
	missing := func(what string) {
		if os.Getenv("MCPWARD_REQUIRE_PEERS") == "1" {
			t.Fatalf("MCPWARD_REQUIRE_PEERS=1 but %s is missing (run: cd peers && npm ci)", what)
		}
		t.Skipf("%s is missing (run: cd peers && npm ci; MCPWARD_REQUIRE_PEERS=1 makes this a failure)", what)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node")
	}
	entry, err = filepath.Abs(everythingEntry)
	require.NoError(t, err)
	if _, err := os.Stat(entry); err != nil {
		missing("@modelcontextprotocol/server-everything")
	}
	return node, entry
}

// startEverythingHTTP runs the peer in its Streamable HTTP mode on a
// loopback port until the test ends and returns its /mcp URL.
func startEverythingHTTP(t *testing.T, node, entry string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	cmd := exec.Command(node, entry, "streamableHttp")
	cmd.Env = []string{"PATH=" + filepath.Dir(node), "HOME=" + t.TempDir(), "PORT=" + strconv.Itoa(port)}
	cmd.Dir = t.TempDir()
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, 20*time.Second, 50*time.Millisecond, "the peer never listened")
	return "http://" + addr + "/mcp"
}

// TestEverything runs tools and call of the built CLI against
// server-everything over stdio and Streamable HTTP, in both profiles.
func TestEverything(t *testing.T) {
	node, entry := everythingCommand(t)
	url := startEverythingHTTP(t, node, entry)
	w := newWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {
  "every": {"command": ` + jsonString(node) + `, "args": [` + jsonString(entry) + `, "stdio"]},
  "everyweb": {"type": "http", "url": ` + jsonString(url) + `}
}}`,
	}, "PATH="+filepath.Dir(node))
	for _, profile := range []string{"headless", "desktop"} {
		for _, server := range []string{"every", "everyweb"} {
			t.Run(profile+"/"+server, func(t *testing.T) {
				p := []string{"--profile", profile}
				r := w.run(t, append(p, "tools", server)...)
				require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
				assert.Contains(t, r.stderr, server+": connected (")
				assert.Contains(t, r.stdout, "mcp__"+server+"__echo")
				assert.Contains(t, r.stdout, "mcp__"+server+"__get-sum")

				r = w.run(t, append(p, "tools", server, "--json")...)
				require.Equal(t, 0, r.code, r.stderr)
				var got []view.ServerTools
				require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
				require.Len(t, got, 1)
				assert.Equal(t, "connected", got[0].State)
				assert.NotEmpty(t, got[0].Tools)

				r = w.run(t, append(p, "call", server, "echo", "--args", `{"message":"hello from mcpward"}`)...)
				require.Equal(t, 0, r.code, r.stderr)
				assert.Equal(t, "Echo: hello from mcpward\n", r.stdout)

				r = w.run(t, append(p, "call", server, "get-sum", "--args", `{"a":2,"b":3}`, "--json")...)
				require.Equal(t, 0, r.code, r.stderr)
				var sum view.Call
				require.NoError(t, json.Unmarshal([]byte(r.stdout), &sum))
				assert.False(t, sum.IsError)
				assert.Contains(t, string(sum.Content), "5")

				r = w.run(t, append(p, "call", server, "echo", "--args", `{"message":42}`)...)
				assert.Equal(t, 1, r.code)
				assert.Contains(t, r.stderr, "invalid_arguments")
				assert.Contains(t, r.stderr, "/message: type: expected string, got number", "the pointer is in the refusal's detail (#25 item 6)")

				// Typed results: titles and hints listed, an image as a
				// placeholder, structured content as JSON after the text
				// only when the text does not hold it already.
				r = w.run(t, append(p, "tools", server)...)
				require.Equal(t, 0, r.code, r.stderr)
				assert.Contains(t, r.stdout,
					"Get Tiny Image Tool: Returns a tiny MCP logo image. (hints: read-only, not destructive, idempotent, closed world)")
				r = w.run(t, append(p, "call", server, "get-tiny-image")...)
				require.Equal(t, 0, r.code, r.stderr)
				assert.Regexp(t, `^Here's the image you requested:\n  \[image image/png, [1-9][0-9]* bytes\]\n  The image above is the MCP logo\.\n$`, r.stdout)
				r = w.run(t, append(p, "call", server, "get-structured-content", "--args", `{"location":"Chicago"}`)...)
				require.Equal(t, 0, r.code, r.stderr)
				// The text block holds the same JSON: the structured
				// content is not printed again (#25 item 8).
				assert.Equal(t, `{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}`+"\n", r.stdout)
				r = w.run(t, append(p, "call", server, "get-structured-content", "--args", `{"location":"Chicago"}`, "--json")...)
				require.Equal(t, 0, r.code, r.stderr)
				c := view.Call{}
				require.NoError(t, json.Unmarshal([]byte(r.stdout), &c))
				assert.JSONEq(t, `{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}`, string(c.StructuredContent))
				r = w.run(t, append(p, "call", server, "get-resource-links", "--args", `{"count":1}`)...)
				require.Equal(t, 0, r.code, r.stderr)
				assert.Contains(t, r.stdout, "\n  [resource link Blob Resource 1: ")

				// A tool error (isError) is a result: printed, and exit code 1.
				// The arguments fit the tool's schema (any number); the server
				// throws on a negative id.
				r = w.run(t, append(p, "call", server, "get-resource-reference", "--args", `{"resourceId":-1}`)...)
				assert.Equal(t, 1, r.code, r.stderr)
				assert.Contains(t, r.stdout, "Invalid resourceId")
				assert.Contains(t, r.stderr, server+" get-resource-reference returned an error result")
				r = w.run(t, append(p, "call", server, "get-resource-reference", "--args", `{"resourceId":-1}`, "--json")...)
				assert.Equal(t, 1, r.code, r.stderr)
				c = view.Call{}
				require.NoError(t, json.Unmarshal([]byte(r.stdout), &c))
				assert.True(t, c.IsError)
			})
		}
	}
}
