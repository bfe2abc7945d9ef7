package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
)

// slowDelay is how long the slow example server takes to start: well past
// what a client's connect and first list take, well within serve's wait.
const slowDelay = 2 * time.Second

// slowWorld is a world whose user configuration defines the example
// server behind a start-up delay of slowDelay as "slow", and a server that
// cannot start as "broken".
func slowWorld(t *testing.T) *world {
	t.Helper()
	bin := exampleBinary(t)
	w := newWorld(t, nil)
	script := filepath.Join(w.root, "slow-server")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\n/usr/bin/sleep "+
		strings.TrimSuffix(slowDelay.String(), "s")+"\nexec "+jsonString(bin)+" -dynamic\n"), 0o700))
	w.write(t, "config/mcpward/mcp.json", `{"mcpServers": {"slow": {"command": `+jsonString(script)+`},
		"broken": {"command": `+jsonString(filepath.Join(w.root, "missing-program"))+`}}}`)
	return w
}

// oneShot is what a one-shot client does at once after connecting: list
// the tools, call the slow server's echo, and read mcpward_status.
func oneShot(t *testing.T, cs *mcp.ClientSession) (names []string, echo *mcp.CallToolResult, status string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	echo, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__slow__echo", Arguments: map[string]any{"text": "at once"}})
	require.NoError(t, err)
	st, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcpward_status"})
	require.NoError(t, err)
	return names, echo, text(st)
}

// TestServeReadyWhenItAnswers: a one-shot go-sdk client (connect, list,
// call at once, nothing waited for) sees the real tools of a server that
// takes slowDelay to start, over stdio and over HTTP with the token (on
// 2026-07-28, stateless, and on 2025-11-25, with a session); the
// server that cannot start is named by mcpward_status. With --no-wait
// the first list answers before the slow server is there (today's
// behaviour, kept on demand).
func TestServeReadyWhenItAnswers(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		w := slowWorld(t)
		cs, _, _ := connectStdio(t, w, &iostreams.Buffer{})
		names, echo, status := oneShot(t, cs)
		assert.Contains(t, names, "mcp__slow__echo", "the first list waits for the connect round")
		assert.Contains(t, names, "mcpward_status")
		assert.False(t, echo.IsError, text(echo))
		assert.Equal(t, "at once", text(echo))
		assert.Contains(t, status, "slow: connected")
		assert.Contains(t, status, "broken: failed (config program_not_found)")
	})
	// Over HTTP, a 2026-07-28 client (stateless: every request alone) and
	// a legacy one (with a session), each against a serve just started.
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run("http/"+version, func(t *testing.T) {
			w := slowWorld(t)
			addr := "127.0.0.1:" + freePort(t)
			cmd := serveCmd(w, "serve", "--http", addr)
			stderr := &iostreams.Buffer{}
			cmd.Stderr = stderr
			require.NoError(t, cmd.Start())
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "listening on") }, 30*time.Second, 10*time.Millisecond)
			tok, err := os.ReadFile(filepath.Join(w.root, "state", "mcpward", "serve-token"))
			require.NoError(t, err)
			c := mcp.NewClient(&mcp.Implementation{Name: "one-shot", Version: "0"}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp",
				HTTPClient: &http.Client{Transport: bearer{strings.TrimSpace(string(tok))}}}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			require.NoError(t, err, stderr.String())
			defer cs.Close()
			assert.Equal(t, version, cs.InitializeResult().ProtocolVersion)
			assert.Equal(t, version != "2026-07-28", cs.ID() != "", "a session only before 2026-07-28")
			names, echo, status := oneShot(t, cs)
			assert.Contains(t, names, "mcp__slow__echo", "the first list waits for the connect round")
			assert.Equal(t, "at once", text(echo))
			assert.Contains(t, status, "broken: failed")
		})
	}
	t.Run("no-wait", func(t *testing.T) {
		w := slowWorld(t)
		cs, _, _ := connectStdio(t, w, &iostreams.Buffer{}, "--no-wait")
		names := toolNames(t, cs)
		assert.NotContains(t, names, "mcp__slow__echo", "--no-wait answers with what is connected then")
		assert.Contains(t, names, "mcpward_status")
		waitTool(t, cs, "mcp__slow__echo")
	})
}

// TestServeStartupWaitBounded: the first list waits at most
// --connect-timeout for a server that never answers initialize, then
// answers with what connected; mcpward_status says the silent server is
// not connected.
func TestServeStartupWaitBounded(t *testing.T) {
	bin := exampleBinary(t)
	w := newWorld(t, nil)
	silent := filepath.Join(w.root, "silent-server")
	require.NoError(t, os.WriteFile(silent, []byte("#!/bin/sh\nexec /usr/bin/sleep 600\n"), 0o700))
	w.write(t, "config/mcpward/mcp.json", `{"mcpServers": {"ex": {"command": `+jsonString(bin)+`},
		"silent": {"command": `+jsonString(silent)+`}}}`)
	cs, _, _ := connectStdio(t, w, &iostreams.Buffer{}, "--connect-timeout", "2s")
	start := time.Now()
	names := toolNames(t, cs)
	took := time.Since(start)
	assert.Contains(t, names, "mcp__ex__echo")
	assert.Less(t, took, 20*time.Second, "the wait is bounded by the connect timeout, not the supervisor's attempts")
	st := text(call(t, cs, "mcpward_status", nil))
	assert.Contains(t, st, "ex: connected")
	assert.NotContains(t, st, "silent: connected")
	assert.Contains(t, st, "silent: ")
}

// TestServeCallAfterCancel: after a client's cancel of a call of a stdio
// server has stopped its process, the very next call of that server waits
// for the new process and succeeds — no failure while it restarts. (A
// call the client sent before its cancel reached serve ran on the old
// process and ends with it: it is never re-sent.)
func TestServeCallAfterCancel(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the example server's slow tool")
	}
	w := serveWorld(t)
	cs, _, cmd := connectStdio(t, w, &iostreams.Buffer{}, "ex")
	waitTool(t, cs, "slow")
	for i := range 3 {
		before := descendants(cmd.Process.Pid)
		require.NotEmpty(t, before)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 10000}})
			done <- err
		}()
		time.Sleep(300 * time.Millisecond)
		cancel()
		select {
		case err := <-done:
			require.Error(t, err)
		case <-time.After(9 * time.Second):
			t.Fatal("the cancelled call did not end")
		}
		// The go-sdk client sends its cancel after returning: wait until
		// serve has acted on it (the upstream process is gone), so the
		// next call is sent while the server restarts.
		assertNoneLeft(t, before)
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "again"}})
		require.NoError(t, err)
		assert.False(t, r.IsError, "round %d: the call after a cancel waits for the reconnect: %s", i, text(r))
		assert.Equal(t, "again", text(r))
	}
}

// TestServeHTTPUnauthorized: a request without the token is answered 401
// with a JSON-RPC error naming the token file, and a challenge without
// resource_metadata; a go-sdk client without the token fails with that
// message, and asks for no OAuth metadata. serve prints the URL, the
// token file and a client entry, never the token.
func TestServeHTTPUnauthorized(t *testing.T) {
	w := serveWorld(t)
	addr := "127.0.0.1:" + freePort(t)
	cmd := serveCmd(w, "serve", "--http", addr)
	stderr := &iostreams.Buffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	require.Eventually(t, func() bool {
		return strings.Contains(stderr.String(), `"mcpServers"`) && strings.Contains(stderr.String(), "}\n}")
	},
		30*time.Second, 10*time.Millisecond)
	tokenFile := filepath.Join(w.root, "state", "mcpward", "serve-token")
	tok, err := os.ReadFile(tokenFile)
	require.NoError(t, err)
	url := "http://" + addr + "/mcp"
	out := stderr.String()
	assert.Contains(t, out, "listening on "+url)
	assert.Contains(t, out, "token file: "+tokenFile)
	assert.Contains(t, out, `"url": "`+url+`"`)
	assert.Contains(t, out, `"Authorization": "Bearer ${MCPWARD_TOKEN}"`)
	assert.NotContains(t, out, strings.TrimSpace(string(tok)), "the token is never printed")

	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.NotContains(t, resp.Header.Get("WWW-Authenticate"), "resource_metadata")
	var msg struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &msg), "%s", body)
	assert.Contains(t, msg.Error.Message, tokenFile)
	assert.Contains(t, msg.Error.Message, "Authorization: Bearer TOKEN")

	// A go-sdk client without the token: the message reaches its error;
	// it asks for no OAuth metadata (only /mcp is ever requested).
	var paths []string
	c := mcp.NewClient(&mcp.Implementation{Name: "no-token", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: recordPaths{&paths}}}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), tokenFile)
	for _, p := range paths {
		assert.Equal(t, "/mcp", p)
	}
}

// recordPaths records each request's path.
type recordPaths struct{ paths *[]string }

func (r recordPaths) RoundTrip(req *http.Request) (*http.Response, error) {
	*r.paths = append(*r.paths, req.URL.Path)
	return http.DefaultTransport.RoundTrip(req)
}

// TestServePrintConfig: --print-config HOST prints HOST's entry on
// stdout as JSON (a stdio entry starting this mcpward with NAME and
// --workspace; with --http an HTTP entry whose header reads the token
// from where the host can, never the token), where it goes on stderr;
// an unknown host, claude-desktop over HTTP and port 0 are usage errors.
func TestServePrintConfig(t *testing.T) {
	w := serveWorld(t)
	for _, host := range []string{"claude-desktop", "claude-code", "cursor", "vscode"} {
		t.Run(host+"/stdio", func(t *testing.T) {
			r := w.run(t, "serve", "ex", "--workspace", w.ws, "--print-config", host)
			require.Equal(t, 0, r.code, r.stderr)
			var v map[string]map[string]map[string]any
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &v), r.stdout)
			key := "mcpServers"
			if host == "vscode" {
				key = "servers"
			}
			e := v[key]["mcpward"]
			require.NotNil(t, e, r.stdout)
			assert.True(t, filepath.IsAbs(e["command"].(string)), "an absolute command: hosts start servers with a short PATH")
			assert.Equal(t, []any{"serve", "ex", "--workspace", w.ws}, e["args"])
			assert.Contains(t, r.stderr, "paste into")
		})
	}
	for _, host := range []string{"claude-code", "cursor", "vscode"} {
		t.Run(host+"/http", func(t *testing.T) {
			r := w.run(t, "serve", "--http", "127.0.0.1:8765", "--print-config", host)
			require.Equal(t, 0, r.code, r.stderr)
			tok, err := os.ReadFile(filepath.Join(w.root, "state", "mcpward", "serve-token"))
			require.NoError(t, err, "the token file the notes name exists")
			assert.NotContains(t, r.stdout+r.stderr, strings.TrimSpace(string(tok)), "the token is never printed")
			var v map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &v), r.stdout)
			key := "mcpServers"
			if host == "vscode" {
				key = "servers"
			}
			var servers map[string]struct {
				Type    string            `json:"type"`
				URL     string            `json:"url"`
				Headers map[string]string `json:"headers"`
			}
			require.NoError(t, json.Unmarshal(v[key], &servers))
			e := servers["mcpward"]
			assert.Equal(t, "http://127.0.0.1:8765/mcp", e.URL)
			assert.True(t, strings.HasPrefix(e.Headers["Authorization"], "Bearer ${"), e.Headers["Authorization"])
			want := map[string]string{"claude-code": "http", "cursor": "", "vscode": "http"}[host]
			assert.Equal(t, want, e.Type)
			if host == "vscode" {
				assert.Contains(t, string(v["inputs"]), `"password": true`)
			}
			assert.Contains(t, r.stderr, "serve-token")
		})
	}
	for _, args := range [][]string{
		{"serve", "--print-config", "zed"},
		{"serve", "--http", "127.0.0.1:8765", "--print-config", "claude-desktop"},
		{"serve", "--http", "127.0.0.1:0", "--print-config", "cursor"},
	} {
		r := w.run(t, args...)
		assert.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
		assert.True(t, slices.ContainsFunc([]string{"--print-config"}, func(s string) bool { return strings.Contains(r.stderr, s) }), r.stderr)
	}
}
