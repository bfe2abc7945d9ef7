package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/testserver"
)

// serveWorld is a world whose user configuration defines the example
// server (-dynamic) as "ex" and a server that cannot start as "broken".
func serveWorld(t *testing.T) *world {
	t.Helper()
	bin, err := exampleServer()
	require.NoError(t, err)
	w := newWorld(t, nil)
	w.write(t, "config/mcpward/mcp.json", `{"mcpServers": {"ex": {"command": `+jsonString(bin)+`, "args": ["-dynamic"]},
		"broken": {"command": `+jsonString(filepath.Join(w.root, "missing-program"))+`}}}`)
	return w
}

// serveCmd is the CLI running args in w.
func serveCmd(w *world, args ...string) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Env = w.ws, w.env
	return cmd
}

// connectStdio connects a go-sdk client to "mcpward serve ARGS..." in w;
// changed receives a value on every notifications/tools/list_changed.
func connectStdio(t *testing.T, w *world, stderr *iostreams.Buffer, args ...string) (*mcp.ClientSession, chan struct{}, *exec.Cmd) {
	t.Helper()
	return connectStdioWith(t, w, stderr, nil, args...)
}

// connectStdioWith is connectStdio with onProgress, when not nil, as the
// client's progress notification handler.
func connectStdioWith(t *testing.T, w *world, stderr *iostreams.Buffer, onProgress func(*mcp.ProgressNotificationParams), args ...string) (*mcp.ClientSession, chan struct{}, *exec.Cmd) {
	t.Helper()
	changed := make(chan struct{}, 16)
	opts := &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	}
	if onProgress != nil {
		opts.ProgressNotificationHandler = func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { onProgress(req.Params) }
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "serve-test", Version: "0"}, opts)
	cmd := serveCmd(w, append([]string{"serve"}, args...)...)
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err, "stderr: %s", stderr.String())
	t.Cleanup(func() { _ = cs.Close() })
	return cs, changed, cmd
}

// toolNames lists the session's tools' names.
func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// waitTool waits until the session lists name.
func waitTool(t *testing.T, cs *mcp.ClientSession, name string) {
	t.Helper()
	require.Eventually(t, func() bool { return slices.Contains(toolNames(t, cs), name) }, 30*time.Second, 50*time.Millisecond,
		"%s never listed", name)
}

// text is the text of a result's content blocks.
func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	return r
}

// TestServeStdio: a go-sdk client over stdio lists and calls the example
// server's tools under their host-facing names; tool_add changes the
// upstream list (the upstream process keeps that state: the added tool
// answers), which reaches the client as list_changed; mcpward_status
// names the broken server's state and reason; arguments are validated;
// every forwarded call is audited without its arguments.
func TestServeStdio(t *testing.T) {
	w := serveWorld(t)
	stderr := &iostreams.Buffer{}
	cs, changed, _ := connectStdio(t, w, stderr)
	waitTool(t, cs, "mcp__ex__echo")
	assert.Contains(t, toolNames(t, cs), "mcpward_status")

	r := call(t, cs, "mcp__ex__echo", map[string]any{"text": "hello through mcpward"})
	assert.False(t, r.IsError)
	assert.Equal(t, "hello through mcpward", text(r))

	// Typed results pass through: the output schema the server declared
	// (narrowed), and the structured content the catalog checked against it.
	listed, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var add *mcp.Tool
	for _, tl := range listed.Tools {
		if tl.Name == "mcp__ex__add" {
			add = tl
		}
	}
	require.NotNil(t, add)
	require.NotNil(t, add.OutputSchema, "the output schema is forwarded")
	sum := call(t, cs, "mcp__ex__add", map[string]any{"a": 2, "b": 3})
	require.False(t, sum.IsError, text(sum))
	assert.Equal(t, map[string]any{"sum": 5.0}, sum.StructuredContent, "the structured content is forwarded")

	bad := call(t, cs, "mcp__ex__echo", map[string]any{"text": 42})
	assert.True(t, bad.IsError, "arguments are validated before anything is sent")
	assert.Contains(t, text(bad), "invalid_arguments")
	assert.Contains(t, text(bad), "/text: type: expected string, got number", "the pointer reaches serve's client (#25 item 6)")

	for len(changed) > 0 {
		<-changed
	}
	r = call(t, cs, "mcp__ex__tool_add", map[string]any{"name": "greet", "field": "who"})
	require.False(t, r.IsError, text(r))
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no notifications/tools/list_changed reached the client")
	}
	waitTool(t, cs, "mcp__ex__greet")
	r = call(t, cs, "mcp__ex__greet", map[string]any{"who": "secret-argument-value"})
	assert.Equal(t, "secret-argument-value", text(r), "the upstream process kept the tool it was asked to add")

	r = call(t, cs, "mcp__ex__tool_remove", map[string]any{"name": "greet"})
	require.False(t, r.IsError, text(r))
	require.Eventually(t, func() bool { return !slices.Contains(toolNames(t, cs), "mcp__ex__greet") }, 30*time.Second, 50*time.Millisecond)

	st := call(t, cs, "mcpward_status", nil)
	assert.Contains(t, text(st), "ex: connected")
	assert.Contains(t, text(st), "broken: failed")
	require.NoError(t, cs.Close())
	assert.Contains(t, stderr.String(), "broken: failed", "stderr carries the lines of tools")

	var audit []byte
	require.NoError(t, filepath.WalkDir(filepath.Join(w.root, "state"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(d.Name(), "audit") {
			b, _ := os.ReadFile(p)
			audit = append(audit, b...)
		}
		return nil
	}))
	assert.Contains(t, string(audit), `"action":"call"`)
	assert.Contains(t, string(audit), "tool=echo")
	assert.Contains(t, string(audit), "tool=greet")
	assert.Contains(t, string(audit), "reason=invalid_arguments")
	assert.NotContains(t, string(audit), "secret-argument-value", "arguments are never recorded")
	assert.NotContains(t, string(audit), "hello through mcpward")
}

// TestServeOne: "mcpward serve ex" fronts ex alone under its own names.
func TestServeOne(t *testing.T) {
	w := serveWorld(t)
	cs, _, _ := connectStdio(t, w, &iostreams.Buffer{}, "ex")
	waitTool(t, cs, "echo")
	assert.NotContains(t, toolNames(t, cs), "mcp__ex__echo")
	assert.Equal(t, "hi", text(call(t, cs, "echo", map[string]any{"text": "hi"})))
	st := call(t, cs, "mcpward_status", nil)
	assert.NotContains(t, text(st), "broken")
}

// freePort returns a loopback port nobody listens on (now).
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	require.NoError(t, ln.Close())
	return port
}

// bearer adds the token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeHTTP: over Streamable HTTP the token is required (401), a
// foreign Origin or Host is refused (403), and a go-sdk client with the
// token lists and calls.
func TestServeHTTP(t *testing.T) {
	w := serveWorld(t)
	addr := "127.0.0.1:" + freePort(t)
	cmd := serveCmd(w, "serve", "--http", addr)
	stderr := &iostreams.Buffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "listening on") }, 30*time.Second, 20*time.Millisecond)
	tokenFile := filepath.Join(w.root, "state", "mcpward", "serve-token")
	fi, err := os.Stat(tokenFile)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	tok, err := os.ReadFile(tokenFile)
	require.NoError(t, err)
	token := strings.TrimSpace(string(tok))
	url := "http://" + addr + "/mcp"

	post := func(hdr map[string]string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	assert.Equal(t, http.StatusUnauthorized, post(nil).StatusCode)
	assert.Equal(t, http.StatusUnauthorized, post(map[string]string{"Authorization": "Bearer wrong"}).StatusCode)
	assert.Equal(t, http.StatusForbidden, post(map[string]string{"Authorization": "Bearer " + token, "Origin": "http://evil.example"}).StatusCode)
	assert.Equal(t, http.StatusForbidden, post(map[string]string{"Authorization": "Bearer " + token, "Host": "evil.example:80"}).StatusCode)
	resp := post(map[string]string{"Authorization": "Bearer " + token, "Origin": "http://evil.example"})
	assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"), "no CORS")

	c := mcp.NewClient(&mcp.Implementation{Name: "serve-test", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	require.NoError(t, err, stderr.String())
	defer cs.Close()
	waitTool(t, cs, "mcp__ex__echo")
	assert.Equal(t, "over http", text(call(t, cs, "mcp__ex__echo", map[string]any{"text": "over http"})))
	assert.NotContains(t, stderr.String(), token, "the token is never printed")

	// A token file others may read is replaced at the next start.
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	require.NoError(t, os.Chmod(tokenFile, 0o644))
	cmd2 := serveCmd(w, "serve", "--http", "127.0.0.1:"+freePort(t))
	stderr2 := &iostreams.Buffer{}
	cmd2.Stderr = stderr2
	require.NoError(t, cmd2.Start())
	t.Cleanup(func() { _ = cmd2.Process.Kill(); _ = cmd2.Wait() })
	require.Eventually(t, func() bool { return strings.Contains(stderr2.String(), "listening on") }, 30*time.Second, 20*time.Millisecond)
	fi, err = os.Stat(tokenFile)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	tok2, err := os.ReadFile(tokenFile)
	require.NoError(t, err)
	assert.NotEqual(t, token, strings.TrimSpace(string(tok2)))
}

// TestServeHTTPNoToken: --unsafe-no-token is announced, accepted only
// with --http on loopback.
func TestServeHTTPNoToken(t *testing.T) {
	w := serveWorld(t)
	r := w.run(t, "serve", "--http", "0.0.0.0:9", "--unsafe-no-token")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "loopback")
	r = w.run(t, "serve", "--unsafe-no-token")
	assert.Equal(t, 2, r.code)

	addr := "127.0.0.1:" + freePort(t)
	cmd := serveCmd(w, "serve", "--http", addr, "--unsafe-no-token")
	stderr := &iostreams.Buffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "listening on") }, 30*time.Second, 20*time.Millisecond)
	assert.Contains(t, stderr.String(), "--unsafe-no-token")
	c := mcp.NewClient(&mcp.Implementation{Name: "serve-test", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, nil)
	require.NoError(t, err)
	defer cs.Close()
	waitTool(t, cs, "mcp__ex__echo")
}

// TestServeSIGTERM: SIGTERM ends serve and every upstream process group.
func TestServeSIGTERM(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("walks /proc")
	}
	w := serveWorld(t)
	stderr := &iostreams.Buffer{}
	cs, _, cmd := connectStdio(t, w, stderr)
	waitTool(t, cs, "mcp__ex__echo")
	under := descendants(cmd.Process.Pid)
	require.NotEmpty(t, under, "the upstream server runs under serve")
	pid := cmd.Process.Pid
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	assert.Eventually(t, func() bool { return syscall.Kill(pid, 0) != nil || isZombie(pid) },
		30*time.Second, 50*time.Millisecond, "serve did not exit: %s", stderr.String())
	assertNoneLeft(t, under)
}

// isZombie reports whether pid has exited (not yet reaped).
func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] == "Z"
}

// TestServeElicitation: over stdio a server's question reaches the one
// client that declared elicitation and its answer goes back; a client
// without it gets the question refused (the server sees an error).
func TestServeElicitation(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	w := newWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {"asker": {"command": ` + jsonString(exe) +
			`, "env": {"` + testserver.Env + `": "` + testserver.ModeElicit + `"}}}}`,
	})
	asked := make(chan *mcp.ElicitParams, 1)
	c := mcp.NewClient(&mcp.Implementation{Name: "serve-test", Version: "0"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- r.Params
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ann", "age": 41, "score": 1.5, "status": "pending", "verified": false}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stderr := &iostreams.Buffer{}
	cmd := serveCmd(w, "serve")
	cmd.Stderr = stderr
	// Before 2026-07-28 (elicitation/create); from that version on the
	// question travels in the call's result: TestServeElicitationMultiRound.
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err, stderr.String())
	defer cs.Close()
	waitTool(t, cs, "mcp__asker__ask")
	r := call(t, cs, "mcp__asker__ask", map[string]any{})
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(text(r)), &got), text(r))
	assert.Equal(t, "accept", got["action"], text(r))
	assert.Equal(t, "Ann", got["content"].(map[string]any)["name"])
	p := <-asked
	schema, _ := json.Marshal(p.RequestedSchema)
	assert.Contains(t, string(schema), `"enum":["active","inactive","pending"]`)

	// A client without elicitation: refused by name, nothing asked.
	cs2, _, _ := connectStdio(t, w, &iostreams.Buffer{})
	waitTool(t, cs2, "mcp__asker__ask")
	r = call(t, cs2, "mcp__asker__ask", map[string]any{})
	assert.Contains(t, text(r), "elicitation_unavailable", text(r))
}

// TestServeTypeScriptClient: the TypeScript SDK's client (peers/) starts
// mcpward serve (and serve ex) over stdio, lists and calls.
func TestServeTypeScriptClient(t *testing.T) {
	node, entry := everythingCommand(t) // skips without node and peers
	sdk := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(entry))), "sdk")
	if _, err := os.Stat(filepath.Join(sdk, "package.json")); err != nil {
		t.Skip("@modelcontextprotocol/sdk is missing (run: cd peers && npm ci)")
	}
	w := serveWorld(t)
	env := map[string]string{}
	for _, kv := range w.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	envJSON, err := json.Marshal(env)
	require.NoError(t, err)
	script, err := filepath.Abs(filepath.Join("testdata", "serve_ts_client.mjs"))
	require.NoError(t, err)
	for _, tc := range []struct{ args, tool string }{{`["serve"]`, "mcp__ex__echo"}, {`["serve","ex"]`, "echo"}} {
		t.Run(tc.args, func(t *testing.T) {
			cmd := exec.Command(node, script)
			cmd.Env = []string{"PATH=" + filepath.Dir(node), "HOME=" + t.TempDir(), "MCP_SDK=" + sdk, "MCPWARD=" + binary,
				"SERVE_ENV=" + string(envJSON), "SERVE_CWD=" + w.ws, "SERVE_ARGS=" + tc.args, "TOOL=" + tc.tool}
			out, err := cmd.Output()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("node: %v\n%s", err, ee.Stderr)
			}
			require.NoError(t, err)
			var got struct {
				Tools   []string
				Text    string
				IsError bool
			}
			require.NoError(t, json.Unmarshal(out, &got), string(out))
			assert.Contains(t, got.Tools, tc.tool)
			assert.Contains(t, got.Tools, "mcpward_status")
			assert.Equal(t, "from typescript", got.Text)
			assert.False(t, got.IsError)
		})
	}
}

// TestServeCancel: a client's cancel ends the upstream call; over stdio
// that stops the upstream process (a new one serves the next call, the old
// one's state is gone). The cancel is sent once the upstream server has
// reported the call's start (its progress notification, forwarded by
// serve): only a call in flight upstream is abandoned there; one cancelled
// before it was sent is simply not sent.
func TestServeCancel(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("walks /proc")
	}
	w := serveWorld(t)
	started := make(chan struct{}, 1)
	cs, _, cmd := connectStdioWith(t, w, &iostreams.Buffer{}, func(p *mcp.ProgressNotificationParams) {
		if p.ProgressToken == "cancel-me" {
			select {
			case started <- struct{}{}:
			default:
			}
		}
	}, "ex")
	waitTool(t, cs, "slow")
	before := descendants(cmd.Process.Pid)
	require.NotEmpty(t, before)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 10000}}
		params.SetProgressToken("cancel-me")
		_, err := cs.CallTool(ctx, params)
		done <- err
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("the call ended before it started upstream: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the upstream server never reported the call's start")
	}
	cancel()
	select {
	case err := <-done:
		require.Error(t, err)
	case <-time.After(9 * time.Second):
		t.Fatal("the cancelled call did not end")
	}
	assertNoneLeft(t, before)
	require.Eventually(t, func() bool {
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "again"}})
		return err == nil && !r.IsError && text(r) == "again"
	}, 30*time.Second, 100*time.Millisecond, "a new upstream process serves the next call")
}

// TestServeWorkspace: --workspace DIR decides the project file read: a
// project server awaiting approval is not silently missing, its state and
// reason are in mcpward_status; a DIR that is not a directory is a usage
// error.
func TestServeWorkspace(t *testing.T) {
	w := serveWorld(t)
	other := filepath.Join(w.root, "other-project")
	w.write(t, "other-project/.mcp.json", `{"mcpServers": {"proj": {"command": "/bin/true"}}}`)
	cs, _, _ := connectStdio(t, w, &iostreams.Buffer{}, "--workspace", other)
	waitTool(t, cs, "mcp__ex__echo")
	st := text(call(t, cs, "mcpward_status", nil))
	assert.Contains(t, st, "proj: denied (not_approved)", st)
	assert.Contains(t, st, "broken: failed (config program_not_found)", st)

	r := w.run(t, "serve", "--workspace", filepath.Join(w.root, "missing"))
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "--workspace")
}

// TestServeHTTPRefusesElicitation: over HTTP elicitation is not offered
// to the servers, so a server's question is refused (method not found),
// even for a client that declared elicitation.
func TestServeHTTPRefusesElicitation(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	w := newWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {"asker": {"command": ` + jsonString(exe) +
			`, "env": {"` + testserver.Env + `": "` + testserver.ModeElicit + `"}}}}`,
	})
	addr := "127.0.0.1:" + freePort(t)
	cmd := serveCmd(w, "serve", "--http", addr, "--unsafe-no-token")
	stderr := &iostreams.Buffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "listening on") }, 30*time.Second, 20*time.Millisecond)
	var asked atomic.Bool
	c := mcp.NewClient(&mcp.Implementation{Name: "serve-test", Version: "0"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Store(true)
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer cs.Close()
	waitTool(t, cs, "mcp__asker__ask")
	r := call(t, cs, "mcp__asker__ask", map[string]any{})
	assert.Contains(t, text(r), "-32601", "the server was told no elicitation: %s", text(r))
	assert.False(t, asked.Load())
}
