package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
)

// startServeHTTP starts "mcpward serve --http ADDR args..." in w and
// returns the command, the address and the token.
func startServeHTTP(t *testing.T, w *world, args ...string) (*execCmd, string, string) {
	t.Helper()
	addr := "127.0.0.1:" + freePort(t)
	cmd := serveCmd(w, append([]string{"serve", "--http", addr}, args...)...)
	stderr := &iostreams.Buffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "listening on") }, 30*time.Second, 20*time.Millisecond)
	tok, err := os.ReadFile(filepath.Join(w.root, "state", "mcpward", "serve-token"))
	require.NoError(t, err)
	return &execCmd{cmd.Process.Pid, stderr}, addr, strings.TrimSpace(string(tok))
}

// execCmd is a started serve: its pid and stderr.
type execCmd struct {
	pid    int
	stderr *iostreams.Buffer
}

// fds is how many files the process has open.
func (c *execCmd) fds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", c.pid))
	require.NoError(t, err)
	return len(ents)
}

// rssKB is the process's resident set, in KiB.
func (c *execCmd) rssKB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.pid))
	require.NoError(t, err)
	for l := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// get sends one GET /mcp on a new connection and returns the status, or
// 0 when the connection was closed unanswered.
func get(addr string) int {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = io.WriteString(c, "GET /mcp HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestServeHTTPConnectionLimits is issue 22's attack 6 on the built CLI,
// with the default limits: 2,000 idle connections opened by a process
// without the token leave serve with at most --max-connections (256) of
// them open (the others answered 503 with Retry-After, or closed), its
// open files bounded; a connection refused 401 is closed at once; a
// silent connection is closed after --read-timeout; once the idle
// connections are gone a request is served again.
func TestServeHTTPConnectionLimits(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	w := serveWorld(t)
	srv, addr, _ := startServeHTTP(t, w, "--read-timeout", "3s")
	base := srv.fds(t)

	// 401 closes the connection.
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = io.WriteString(c, "GET /mcp HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	_, _ = io.Copy(io.Discard, resp.Body)
	start := time.Now()
	_, err = br.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "serve closed the connection")
	assert.Less(t, time.Since(start), 2*time.Second)
	c.Close()

	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range 2000 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			continue
		}
		idle = append(idle, c)
	}
	time.Sleep(300 * time.Millisecond)
	open := srv.fds(t)
	t.Logf("serve's open files: %d before, %d with 2,000 idle connections", base, open)
	assert.LessOrEqual(t, open, base+256+40, "serve keeps at most --max-connections connections open")
	assert.Contains(t, []int{http.StatusServiceUnavailable, 0}, get(addr), "one more is refused")

	// The idle connections are closed after --read-timeout: the slots
	// come back.
	require.Eventually(t, func() bool { return get(addr) == http.StatusUnauthorized }, 20*time.Second, 100*time.Millisecond,
		"served again once the silent connections timed out")
	require.Eventually(t, func() bool { return srv.fds(t) <= base+40 }, 20*time.Second, 100*time.Millisecond,
		"every silent connection is closed")
}

// TestServeHTTPSessionLimits: --max-sessions 2 lets two clients in and
// answers a third 503; 2,000 more initialize requests do not grow serve's
// memory; --session-idle-timeout 1s expires the idle sessions, after which
// a client connects.
func TestServeHTTPSessionLimits(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	w := serveWorld(t)
	srv, addr, token := startServeHTTP(t, w, "--max-sessions", "2")
	url := "http://" + addr + "/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	connectTo := func(url string) (*mcp.ClientSession, error) {
		c := mcp.NewClient(&mcp.Implementation{Name: "serve-test", Version: "0"}, nil)
		return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}},
			DisableStandaloneSSE: true, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}) // sessions: before 2026-07-28
	}
	connect := func() (*mcp.ClientSession, error) { return connectTo(url) }
	for range 2 {
		cs, err := connect()
		require.NoError(t, err, srv.stderr.String())
		defer cs.Close()
	}
	_, err := connect()
	require.Error(t, err, "a third session")
	assert.Contains(t, err.Error(), "Service Unavailable")

	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	hc := &http.Client{Transport: bearer{token}}
	before := srv.rssKB(t)
	refused := 0
	for range 2000 {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := hc.Do(req)
		require.NoError(t, err)
		if resp.StatusCode == http.StatusServiceUnavailable {
			refused++
			assert.Equal(t, "5", resp.Header.Get("Retry-After"))
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	after := srv.rssKB(t)
	t.Logf("serve's RSS: %d KiB before, %d KiB after 2,000 initialize requests over the cap", before, after)
	assert.Equal(t, 2000, refused)
	assert.Less(t, after-before, 20<<10, "memory does not grow with refused sessions")

	// Another serve (the same token file), one session, expired after 1 s
	// without a request.
	_, addr2, _ := startServeHTTP(t, w, "--max-sessions", "1", "--session-idle-timeout", "1s")
	url2 := "http://" + addr2 + "/mcp"
	cs, err := connectTo(url2)
	require.NoError(t, err)
	defer cs.Close()
	_, err = connectTo(url2)
	require.Error(t, err, "the one session is taken")
	start := time.Now()
	require.Eventually(t, func() bool {
		cs, err := connectTo(url2)
		if err != nil {
			return false
		}
		cs.Close()
		return true
	}, 20*time.Second, 200*time.Millisecond, "the idle session expired: a client connects")
	assert.GreaterOrEqual(t, time.Since(start), 500*time.Millisecond)
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcpward_status"})
	assert.Error(t, err, "the expired session is gone")
}
